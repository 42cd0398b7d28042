export * from './payload-store';
export * from './postgres-payload-store';
export * from './verify-payloads';
export * from './chunked-output';
