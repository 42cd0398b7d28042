import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
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
  /** Headers beside the content type, e.g. an ETag. */
  headers?: Record<string, string>;
  /** Writes the body and keeps the response open, as a stream that has more to come does, until the client leaves or the server closes. */
  open?: boolean;
}

/**
 * A local HTTP server standing in for the API with the answers a spec sets (one per route, else
 * `reply`), and the CLI run against it in-process: what a command sends, prints and exits with.
 */
export class CliApi {
  readonly seen: SeenRequest[] = [];
  /** The Authorization header of each request seen, in the same order. */
  readonly authorizations: Array<string | undefined> = [];
  /** All the headers of each request seen, in the same order. */
  readonly headers: IncomingHttpHeaders[] = [];
  reply: { status: number; body: unknown } = { status: 200, body: {} };
  /** A function answers each request afresh: for a stream the client opens again, or a cursor that moves. */
  routes: Record<string, CliApiRoute | ((request: SeenRequest, headers: IncomingHttpHeaders) => CliApiRoute)> = {};
  private server: Server | null = null;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const request = { method: req.method ?? '', url: req.url ?? '', body };
        this.seen.push(request);
        this.authorizations.push(req.headers.authorization);
        this.headers.push(req.headers);
        const answer = this.routes[`${req.method} ${req.url}`] ?? { status: this.reply.status, body: JSON.stringify(this.reply.body) };
        const route = typeof answer === 'function' ? answer(request, req.headers) : answer;
        res.writeHead(route.status, { 'content-type': route.type ?? (route.status < 400 ? 'application/json' : 'application/problem+json'), ...route.headers });
        if (route.open) res.write(route.body);
        else res.end(route.body);
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

  /**
   * Runs `packetagent <argv>` against this server, in workspace ws_demo with an API key;
   * `terminal` stands for a person at a terminal (answering questions, pressing Ctrl-C), `env`
   * adds to the environment.
   */
  async cli(argv: string[], terminal: Pick<CliIo, 'confirm' | 'onSignal'> = {}, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = { stdout: '', stderr: '' };
    const io: CliIo = {
      stdout: (text) => (out.stdout += text),
      stderr: (text) => (out.stderr += text),
      env: { PACKETAGENT_API_URL: `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`, PACKETAGENT_API_KEY: 'pa_key1_secret', PACKETAGENT_WORKSPACE: 'ws_demo', ...env },
      cwd: process.cwd(),
      readStdin: () => Promise.resolve(''),
      ...terminal,
    };
    const code = await runCli(argv, io);
    return { code, ...out };
  }
}
