export * from './run.events.v1';
