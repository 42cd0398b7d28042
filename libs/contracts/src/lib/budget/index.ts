export * from './budget.events.v1';
export * from './budget.commands.v1';
