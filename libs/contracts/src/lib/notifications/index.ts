export * from './notifications.events.v1';
export * from './notifications.commands.v1';
