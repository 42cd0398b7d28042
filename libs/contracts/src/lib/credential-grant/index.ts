export * from './credential-grant';
