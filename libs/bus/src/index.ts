export * from './lib/topology';
export * from './lib/headers';
export * from './lib/provisioning';
export * from './lib/connection';
export * from './lib/consumer-runner';
export * from './lib/commands';
export * from './lib/nest';
