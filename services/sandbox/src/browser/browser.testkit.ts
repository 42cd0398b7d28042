import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestSite {
  origin: string;
  port: number;
  /** Path and Cookie header of every request that reached the site. */
  received: { path: string; cookie: string | undefined }[];
  /** WebSocket upgrades that reached the site (none should). */
  upgrades: number;
  close(): Promise<void>;
}

export type TestRoutes = Record<string, (request: IncomingMessage, response: ServerResponse) => void>;

/** An HTTP site on 127.0.0.1 (a free port) answering the given paths, 404 for any other. */
export async function startTestSite(routes: (site: TestSite) => TestRoutes): Promise<TestSite> {
  let answer: TestRoutes = {};
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    site.received.push({ path, cookie: request.headers.cookie });
    const route = answer[path];
    if (route) route(request, response);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  server.on('upgrade', (_request, socket) => {
    site.upgrades++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const site: TestSite = {
    origin: `http://127.0.0.1:${port}`,
    port,
    received: [],
    upgrades: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  answer = routes(site);
  return site;
}

export function html(body: string, headers: Record<string, string | string[]> = {}) {
  return (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(`<!doctype html><html>${body}</html>`);
  };
}

export function redirect(location: string, status = 302, headers: Record<string, string | string[]> = {}) {
  return (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, { location, ...headers }).end();
  };
}
