export * from './run.events.v1';
export * from './run-vocabulary';
export * from './supervisor.commands.v1';
export * from './run-migration.v1';
export * from './models.commands.v1';
