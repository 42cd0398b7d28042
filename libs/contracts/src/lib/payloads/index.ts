export * from './payload-ref';
