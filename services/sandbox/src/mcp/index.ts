export { McpSessions, serverSpecDigest, type McpCallRequest } from './mcp-sessions';
export { McpCallError } from './mcp-call-error';
