export * from './projector.commands.v1';
