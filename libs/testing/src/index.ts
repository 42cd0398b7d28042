export * from './lib/env';
export * from './lib/database';
export * from './lib/bus';
export * from './lib/redis';
export * from './lib/wait';
export * from './lib/processes';
export * from './lib/http';
export * from './lib/sshd';
