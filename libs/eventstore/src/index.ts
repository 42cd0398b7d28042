export * from './lib/errors';
export * from './lib/event-store';
export * from './lib/migrate';
export * from './lib/verify-chain';
export * from './lib/payloads';
export * from './lib/relay/relay';
export * from './lib/relay/gap-rule';
export { rowToEnvelope, type EventRow } from './lib/rows';
export * from './lib/nest';
