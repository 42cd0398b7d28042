import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallAuthorization, PlannedCall, ToolContext } from '../tool.types';

/** The allow decision policy would give for exactly this call. */
export function allowFor(planned: PlannedCall): CallAuthorization {
  return { decision: 'allow', tool: planned.tool, verb: planned.verb, resource: planned.resource, callDigest: planned.callDigest };
}

export function contextFor(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspaceId: 'ws_test',
    runId: 'run-0001',
    workDir: overrides.workDir ?? tmpdir(),
    idempotencyKey: 'idem-key-0001',
    credentials: {},
    signal: new AbortController().signal,
    ...overrides,
  };
}

export async function temporaryDirectory(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface LocalServer {
  port: number;
  origin: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/** A local HTTP server that records every request (body included) before `answer` handles it. */
export async function localServer(answer: (request: ReceivedRequest, response: ServerResponse) => void): Promise<LocalServer> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(entry);
      answer(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs git for test set-up, isolated from the machine's git configuration. */
export function gitSync(cwd: string, args: readonly string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/**
 * Serves the bare repositories under `projectRoot` over git's smart HTTP protocol through
 * `git http-backend` (as CGI), pushes included, recording each request's method, URL and headers.
 */
export async function gitHttpServer(projectRoot: string): Promise<LocalServer> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: '' });
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: projectRoot,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        // A set REMOTE_USER is what lets http-backend accept pushes.
        REMOTE_USER: 'tester',
        REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
      },
    });
    request.pipe(child.stdin);
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', () => {
      const output = Buffer.concat(chunks);
      const crlf = output.indexOf('\r\n\r\n');
      const split = crlf >= 0 ? crlf : output.indexOf('\n\n');
      const head = output.subarray(0, split).toString('latin1');
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.split(/\r?\n/)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      response.writeHead(status, headers).end(output.subarray(split + (crlf >= 0 ? 4 : 2)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
