export * from './lib/tracing';
export * from './lib/sdk';
