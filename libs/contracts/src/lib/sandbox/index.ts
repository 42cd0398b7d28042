export * from './sandbox.commands.v1';
