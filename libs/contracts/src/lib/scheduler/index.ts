export * from './timer.events.v1';
export * from './timer.commands.v1';
