import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CommandBus, topology } from '@packetagent/bus';
import { MCP_INLINE_RESULT_BYTES, McpCommands } from '@packetagent/contracts';
import { startApp } from './app-process';
import { now, ratio, summarise, table, type Summary } from './stats';

export interface McpBenchOptions {
  warmup: number;
  count: number;
}

export interface McpResults {
  /** `sandbox.mcp.call` as a run's call: NATS request, the session's pin and argument checks, the checked fetch, the small result in the answer. */
  sandboxed: Summary;
  /** The SDK's Client with its own transport and fetch, in this process, on a warm session. */
  sdk: Summary;
  /** The same with a result above MCP_INLINE_RESULT_BYTES, which the sandbox stores and answers by reference. */
  large: { resultBytes: number; sandboxed: Summary; sdk: Summary };
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** A Streamable HTTP MCP server on loopback (the SDK's McpServer, one per session) with an echo tool. */
async function echoServer(): Promise<{ url: string; host: string; close(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((request, response) => {
    void (async () => {
      const body = request.method === 'POST' ? await bodyOf(request) : undefined;
      const id = request.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport && request.method === 'POST' && isInitializeRequest(body)) {
        const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sessionId) => void sessions.set(sessionId, created) });
        const server = new McpServer({ name: 'bench-echo', version: '1.0.0' });
        server.registerTool('echo', { description: 'Answers the text it is given', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
        await server.connect(created);
        transport = created;
      }
      if (!transport) return void response.writeHead(404).end();
      await transport.handleRequest(request, response, body);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    host: `127.0.0.1:${port}`,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** One echo call at a time over Streamable HTTP: through the sandbox service as a run's call, and with the SDK alone, both on warm sessions. */
export async function benchMcp(options: McpBenchOptions): Promise<McpResults> {
  const server = await echoServer();
  const app = await startApp({ PACKETAGENT_HTTP_ALLOW_PRIVATE: server.host });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    const bus = new CommandBus(app.bus.nc, topology(app.bus.prefix));
    const { workspaceId } = app.setup;
    const spec = { name: 'echo', transport: 'http' as const, url: server.url };
    const listed = await bus.request(McpCommands.list, { workspaceId, server: spec }, { timeoutMs: 30_000 });
    const tool = listed.tools.find((candidate) => candidate.name === 'echo');
    if (!tool) throw new Error('the echo server did not list echo');

    let n = 0;
    let largeBytes = 0;
    // A result of its own size in the answer, or one over the inline limit stored by reference.
    const sandboxedWith = (textOf: () => string, byReference: boolean) => async (): Promise<number> => {
      const text = textOf();
      const t0 = now();
      const result = await bus.request(McpCommands.call, { workspaceId, runId: 'bench-run', callKey: `bench-run:call-${++n}`, server: spec, tool, arguments: { text } }, { timeoutMs: 30_000 });
      const ms = now() - t0;
      if (!result.ok || result.preview !== text) throw new Error(`the call through the sandbox answered ${JSON.stringify(result.error)}`);
      if ((result.result !== null) !== byReference) throw new Error(`the sandbox answered a ${result.bytes}-byte result ${result.result ? 'by reference' : 'inline'}`);
      if (byReference) largeBytes = result.bytes;
      return ms;
    };
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const sdkWith = (textOf: () => string) => async (): Promise<number> => {
      const text = textOf();
      const t0 = now();
      const result = await client.callTool({ name: 'echo', arguments: { text } });
      const ms = now() - t0;
      if (result.isError) throw new Error('the SDK call failed');
      return ms;
    };
    const sandboxed = sandboxedWith(() => 'hello', false);
    const sdk = sdkWith(() => 'hello');
    // A different large result each call, so each is stored anew rather than found already there.
    let distinct = 0;
    const largeText = () => `${String(++distinct).padStart(8, '0')}${'x'.repeat(2 * MCP_INLINE_RESULT_BYTES)}`;

    // Blocks of each path in turn, so the drift of a shared machine meets both alike while each runs warm.
    const alternate = async (sdkOp: () => Promise<number>, sandboxOp: () => Promise<number>, count: number) => {
      const alone: number[] = [];
      const through: number[] = [];
      const block = Math.max(1, Math.ceil(count / 10));
      for (let done = 0; done < count; done += block) {
        for (let i = done; i < Math.min(count, done + block); i++) alone.push(await sdkOp());
        for (let i = done; i < Math.min(count, done + block); i++) through.push(await sandboxOp());
      }
      return { alone, through };
    };
    await alternate(sdk, sandboxed, options.warmup);
    const small = await alternate(sdk, sandboxed, options.count);
    await alternate(sdkWith(largeText), sandboxedWith(largeText, true), options.warmup);
    const large = await alternate(sdkWith(largeText), sandboxedWith(largeText, true), options.count);
    await bus.request(McpCommands.close, { workspaceId, runId: 'bench-run' });
    return {
      sandboxed: summarise(small.through),
      sdk: summarise(small.alone),
      large: { resultBytes: largeBytes, sandboxed: summarise(large.through), sdk: summarise(large.alone) },
    };
  } finally {
    await client.close().catch(() => undefined);
    await app.stop();
    await server.close();
  }
}

export function printMcp(mcp: McpResults): void {
  process.stdout.write('\n(j) MCP: an echo tool call one at a time over Streamable HTTP to a local server (the SDK\'s McpServer), warm sessions, the two paths in alternating blocks of a tenth: through the sandbox service as a run\'s call (NATS request, pin and argument checks, the address-checked fetch, a small result in the answer, a large one stored by reference) and with the SDK\'s Client alone in this process\n');
  process.stdout.write(
    table(
      ['path', 'count', 'p50 ms', 'p99 ms', 'max ms', 'p50 vs SDK'],
      [
        ['through the sandbox (result inline)', mcp.sandboxed.count, mcp.sandboxed.p50, mcp.sandboxed.p99, mcp.sandboxed.max, ratio(mcp.sandboxed.p50, mcp.sdk.p50)],
        ['SDK Client alone', mcp.sdk.count, mcp.sdk.p50, mcp.sdk.p99, mcp.sdk.max, '1.00x'],
        [`${mcp.large.resultBytes}-byte result through the sandbox (by reference)`, mcp.large.sandboxed.count, mcp.large.sandboxed.p50, mcp.large.sandboxed.p99, mcp.large.sandboxed.max, ratio(mcp.large.sandboxed.p50, mcp.large.sdk.p50)],
        [`${mcp.large.resultBytes}-byte result, SDK Client alone`, mcp.large.sdk.count, mcp.large.sdk.p50, mcp.large.sdk.p99, mcp.large.sdk.max, '1.00x'],
      ],
    ),
  );
  process.stdout.write(`\ngoal: at most 1.3x plus the policy decision (measured in (e)); the call alone is ${ratio(mcp.sandboxed.p50, mcp.sdk.p50)} the SDK's\n`);
}
