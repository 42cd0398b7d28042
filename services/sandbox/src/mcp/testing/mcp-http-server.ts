import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { testMcpServer, type TestToolState } from './test-tools';

export interface TestMcpHttpServer {
  url: string;
  /** `127.0.0.1:<port>`, for allowPrivate. */
  host: string;
  state: TestToolState;
  /** The Authorization header of every request received. */
  authorizations: Array<string | undefined>;
  /** Sessions initialized so far, and those not yet closed. */
  readonly sessionsOpened: number;
  readonly openSessions: number;
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** A Streamable HTTP MCP server on loopback, one SDK server and transport per session (stateful, as most are). */
export async function testMcpHttpServer(): Promise<TestMcpHttpServer> {
  const state: TestToolState = { echoTakesLanguage: false, counted: 0 };
  const authorizations: Array<string | undefined> = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let sessionsOpened = 0;
  const http: Server = createServer((request, response) => {
    authorizations.push(request.headers.authorization);
    void (async () => {
      const body = request.method === 'POST' ? await bodyOf(request) : undefined;
      const id = request.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport && request.method === 'POST' && isInitializeRequest(body)) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => {
            sessionsOpened++;
            sessions.set(sessionId, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await testMcpServer(state).connect(created);
        transport = created;
      }
      if (!transport) return void response.writeHead(404).end('no such session');
      await transport.handleRequest(request, response, body);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    host: `127.0.0.1:${port}`,
    state,
    authorizations,
    get sessionsOpened() {
      return sessionsOpened;
    },
    get openSessions() {
      return sessions.size;
    },
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
