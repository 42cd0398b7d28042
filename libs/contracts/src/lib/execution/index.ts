export * from './run.events.v1';
export * from './run-vocabulary';
