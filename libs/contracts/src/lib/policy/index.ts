export * from './policy.events.v1';
export * from './policy.commands.v1';
export * from './redaction';
