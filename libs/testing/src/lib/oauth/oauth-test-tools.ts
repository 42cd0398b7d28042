import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** The tools behind the OAuth-protected MCP endpoint: `echo` answers its text, `whoami` the calling token's client id. */
export function oauthTestToolServer(): McpServer {
  const server = new McpServer({ name: 'oauth-test-tools', version: '1.0.0' });
  server.registerTool('echo', { description: 'Answers the text it is given', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async (args) => text(args.text));
  server.registerTool('whoami', { description: 'Answers the client id of the access token the call was made with', annotations: { readOnlyHint: true } }, async (extra) =>
    text(extra.authInfo?.clientId ?? ''),
  );
  return server;
}
