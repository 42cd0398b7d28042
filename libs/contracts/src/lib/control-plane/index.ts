export * from './run-state';
export * from './intake.events.v1';
export * from './intake.commands.v1';
