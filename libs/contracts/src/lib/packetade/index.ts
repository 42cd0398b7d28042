export * from './errors';
export { MAX_PACKAGE_BYTES } from './json-document';
export * from './worker-package.v1';
export * from './dsse';
export * from './document';
export * from './json-schema';
export * from './actor-operations';
