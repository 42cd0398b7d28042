import { connect } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** What the test changes on the server between sessions, and what the server saw. */
export interface TestToolState {
  /** echo's input schema gains a required `lang` (a changed tool under the same name). */
  echoTakesLanguage: boolean;
  counted: number;
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** Where the stdio server writes its raw stdout, to send a line that is not JSON-RPC. */
export type RawStdout = ((line: string) => void) | null;

/** A real MCP server (the SDK's McpServer) with the tools the specs and the benchmark call. */
export function testMcpServer(state: TestToolState, rawStdout: RawStdout = null): McpServer {
  const server = new McpServer({ name: 'test-tools', version: '1.2.3' });
  server.registerTool(
    'echo',
    { description: 'Answers the text it is given', inputSchema: state.echoTakesLanguage ? { text: z.string(), lang: z.string() } : { text: z.string() }, annotations: { readOnlyHint: true } },
    async (args: { text?: unknown }) => text(String(args.text)),
  );
  server.registerTool('fail', { description: 'Always fails' }, async () => ({ isError: true, content: [{ type: 'text', text: 'the disk is full' }] }));
  server.registerTool('count', { description: 'Counts its calls' }, async () => text(String(++state.counted)));
  server.registerTool('big', { description: 'Answers this many bytes of text', inputSchema: { bytes: z.number().int() } }, async (args) => text('x'.repeat(Number(args.bytes))));
  server.registerTool('hang', { description: 'Never answers' }, () => new Promise<CallToolResult>(() => undefined));
  server.registerTool('bad_shape', { description: 'Answers a result that is not a CallToolResult' }, async (extra) => {
    // Over HTTP the SDK's server refuses to send it; over stdio it is written past the SDK.
    if (!rawStdout) return { content: 'not a list of parts' } as unknown as CallToolResult;
    rawStdout(JSON.stringify({ jsonrpc: '2.0', id: extra.requestId, result: { content: 'not a list of parts' } }));
    return new Promise<CallToolResult>(() => undefined);
  });
  server.registerTool('connect', { description: 'Tries a TCP connection', inputSchema: { host: z.string(), port: z.number().int() } }, async (args) => {
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({ host: String(args.host), port: Number(args.port), timeout: 2_000 });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve('failed: timeout');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(`failed: ${error.code ?? error.message}`));
    });
    return text(outcome);
  });
  server.registerTool('garbage', { description: 'Writes a line that is not JSON-RPC (over stdio)' }, async () => {
    if (!rawStdout) return { isError: true, content: [{ type: 'text', text: 'only a stdio server writes raw lines' }] };
    rawStdout('{"jsonrpc":"2.0","id": this is not json');
    return new Promise<CallToolResult>(() => undefined);
  });
  return server;
}
