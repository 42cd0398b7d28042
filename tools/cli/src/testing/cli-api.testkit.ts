import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli, type CliIo } from '../cli';

export interface SeenRequest {
  method: string;
  url: string;
  body: string;
}

/** A fixed answer for one `METHOD url`. */
export interface CliApiRoute {
  status: number;
  type?: string;
  body: string;
}

/**
 * A local HTTP server standing in for the API with the answers a spec sets (one per route, else
 * `reply`), and the CLI run against it in-process: what a command sends, prints and exits with.
 */
export class CliApi {
  readonly seen: SeenRequest[] = [];
  /** The Authorization header of each request seen, in the same order. */
  readonly authorizations: Array<string | undefined> = [];
  reply: { status: number; body: unknown } = { status: 200, body: {} };
  routes: Record<string, CliApiRoute> = {};
  private server: Server | null = null;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        this.seen.push({ method: req.method ?? '', url: req.url ?? '', body });
        this.authorizations.push(req.headers.authorization);
        const route = this.routes[`${req.method} ${req.url}`] ?? { status: this.reply.status, body: JSON.stringify(this.reply.body) };
        res.writeHead(route.status, { 'content-type': route.type ?? (route.status < 400 ? 'application/json' : 'application/problem+json') }).end(route.body);
      });
    });
    await new Promise<void>((ready) => this.server!.listen(0, '127.0.0.1', ready));
    return this;
  }

  /** Answers `METHOD url` with `body` as JSON (problem+json from 400). */
  json(method: string, url: string, status: number, body: unknown): void {
    this.routes[`${method} ${url}`] = { status, body: JSON.stringify(body) };
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((done) => this.server?.close(done) ?? done(undefined));
  }

  /** Runs `packetagent <argv>` against this server, in workspace ws_demo with an API key; `terminal` stands for a person at a terminal. */
  async cli(argv: string[], terminal: Pick<CliIo, 'confirm'> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = { stdout: '', stderr: '' };
    const io: CliIo = {
      stdout: (text) => (out.stdout += text),
      stderr: (text) => (out.stderr += text),
      env: { PACKETAGENT_API_URL: `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`, PACKETAGENT_API_KEY: 'pa_key1_secret', PACKETAGENT_WORKSPACE: 'ws_demo' },
      cwd: process.cwd(),
      readStdin: () => Promise.resolve(''),
      ...terminal,
    };
    const code = await runCli(argv, io);
    return { code, ...out };
  }
}
