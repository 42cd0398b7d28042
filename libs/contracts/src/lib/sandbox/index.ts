export * from './sandbox.commands.v1';
export * from './command-line';
export * from './sandbox.events.v1';
export * from './computer.v1';
export * from './computer.commands.v1';
export * from './mcp.v1';
