export * from './sandbox.commands.v1';
export * from './command-line';
