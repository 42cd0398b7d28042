export const EXEC_RUNNER = Symbol('EXEC_RUNNER');
export const EXEC_STORE = Symbol('EXEC_STORE');
export const DRIVER_SELECTION = Symbol('DRIVER_SELECTION');
export const BROWSER_SESSIONS = Symbol('BROWSER_SESSIONS');
export const COMPUTER_REGISTRY = Symbol('COMPUTER_REGISTRY');
export const COMPUTER_EXECS = Symbol('COMPUTER_EXECS');
export const PROBE_LEADER = Symbol('PROBE_LEADER');
export const MCP_SESSIONS = Symbol('MCP_SESSIONS');
