import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli, type CliIo } from '../cli';

export interface SeenRequest {
  method: string;
  url: string;
  body: string;
}

/**
 * A local HTTP server standing in for the API with the answer a spec sets, and the CLI run
 * against it in-process: what a command sends, prints and exits with.
 */
export class CliApi {
  readonly seen: SeenRequest[] = [];
  reply: { status: number; body: unknown } = { status: 200, body: {} };
  private server: Server | null = null;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        this.seen.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.writeHead(this.reply.status, { 'content-type': this.reply.status < 400 ? 'application/json' : 'application/problem+json' }).end(JSON.stringify(this.reply.body));
      });
    });
    await new Promise<void>((ready) => this.server!.listen(0, '127.0.0.1', ready));
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((done) => this.server?.close(done) ?? done(undefined));
  }

  /** Runs `packetagent <argv>` against this server, in workspace ws_demo with an API key. */
  async cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = { stdout: '', stderr: '' };
    const io: CliIo = {
      stdout: (text) => (out.stdout += text),
      stderr: (text) => (out.stderr += text),
      env: { PACKETAGENT_API_URL: `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`, PACKETAGENT_API_KEY: 'pa_key1_secret', PACKETAGENT_WORKSPACE: 'ws_demo' },
      cwd: process.cwd(),
      readStdin: () => Promise.resolve(''),
    };
    const code = await runCli(argv, io);
    return { code, ...out };
  }
}
