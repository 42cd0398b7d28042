import { createServer, type Server } from 'node:http';

export interface BrokenHttpServer {
  origin: string;
  host: string;
  close(): Promise<void>;
}

/**
 * Answers every MCP request badly, by path: `/wrong-shape` with JSON that is not JSON-RPC,
 * `/bad-event` with an event stream whose event is not JSON, `/silent` never.
 */
export async function brokenHttpServer(): Promise<BrokenHttpServer> {
  const http: Server = createServer((request, response) => {
    request.resume();
    if (request.url === '/wrong-shape') return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hello: 'world' }));
    if (request.url === '/bad-event') return void response.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: message\ndata: {"jsonrpc": "2.0", "id": 0, oops\n\n');
    // `/silent`: the request is read and never answered.
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
