export * from './lib/errors';
export * from './lib/json';
export * from './lib/envelope';
export * from './lib/registry';
