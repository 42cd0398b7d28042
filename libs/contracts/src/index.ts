export * from './lib/errors';
export * from './lib/json';
export * from './lib/envelope';
export * from './lib/event-chain';
export * from './lib/registry';
export * from './lib/commands';
export * from './lib/control-plane';
export * from './lib/identity';
export * from './lib/scheduler';
export * from './lib/worker-definition';
export * from './lib/credential-grant';
export * from './lib/vault';
export * from './lib/policy';
export * from './lib/budget';
export * from './lib/execution';
export * from './lib/audit';
export * from './lib/projector';
export * from './lib/payloads';
export * from './lib/sandbox';
export * from './lib/packetade';
export * from './lib/notifications';
export * from './lib/templates';
// Intake's activation-input reference shares the name inside its own module; this is the one
// event readers resolve.
export { PayloadRefSchema } from './lib/payloads';
