export * from './roles';
export * from './events.v1';
