export * from './lib/env';
export * from './lib/database';
export * from './lib/bus';
export * from './lib/wait';
