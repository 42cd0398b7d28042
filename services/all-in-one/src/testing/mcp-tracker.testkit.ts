import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** An issue tracker as an MCP server over Streamable HTTP (stateless: a server per request), whose tools can change. */
export class Tracker {
  readonly issues: string[] = [];
  /** Every tools/call the server received, by tool name, in order. */
  readonly calls: string[] = [];
  withCloseTool = false;
  /** While set, create_issue waits for it before it answers (a call in flight). */
  hold: Promise<void> | null = null;
  private http: Server | null = null;
  url = '';
  host = '';

  private server(): McpServer {
    const server = new McpServer({ name: 'tracker', version: '1.0.0' });
    server.registerTool('list_issues', { description: 'Lists the open issues.', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => {
      this.calls.push('list_issues');
      return { content: [{ type: 'text', text: JSON.stringify(this.issues) }] };
    });
    server.registerTool('create_issue', { description: 'Opens an issue.', inputSchema: { title: z.string() } }, async ({ title }) => {
      this.calls.push('create_issue');
      if (this.hold) await this.hold;
      this.issues.push(title);
      return { content: [{ type: 'text', text: `created #${this.issues.length}` }] };
    });
    server.registerTool('delete_issue', { description: 'Deletes an issue for good.', inputSchema: { number: z.number().int() }, annotations: { destructiveHint: true } }, async ({ number }) => {
      this.issues.splice(number - 1, 1);
      return { content: [{ type: 'text', text: `deleted #${number}` }] };
    });
    if (this.withCloseTool) server.registerTool('close_issue', { description: 'Closes an issue.', inputSchema: { number: z.number().int() } }, async () => ({ content: [{ type: 'text', text: 'closed' }] }));
    return server;
  }

  async start(): Promise<void> {
    this.http = createServer((request: IncomingMessage, response) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        response.on('close', () => void transport.close());
        await this.server().connect(transport);
        await transport.handleRequest(request, response, body);
      })().catch(() => response.headersSent || response.writeHead(500).end());
    });
    await new Promise<void>((resolve) => this.http!.listen(0, '127.0.0.1', resolve));
    this.host = `127.0.0.1:${(this.http.address() as AddressInfo).port}`;
    this.url = `http://${this.host}/mcp`;
  }

  async close(): Promise<void> {
    this.http?.closeAllConnections();
    await new Promise<void>((resolve) => (this.http ? this.http.close(() => resolve()) : resolve()));
  }
}

