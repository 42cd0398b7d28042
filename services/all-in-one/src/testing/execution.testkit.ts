import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, freePort } from '@packetagent/testing';
import { runStreamId } from '@packetagent/contracts';
import { bearer, startTestApp, type TestApp } from './app.testkit';

export const EXAMPLES = join(__dirname, '../../../../examples');

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A local HTTP server that records what it receives. `hold` keeps a matching request open
 * until released (or the connection dies), to stand for a slow far side.
 */
export class RecordingServer {
  readonly requests: RecordedRequest[] = [];
  private server: Server | null = null;
  private readonly held: ServerResponse[] = [];
  hold: ((request: RecordedRequest) => boolean) | null = null;
  respond: (request: RecordedRequest) => { status: number; body: string; headers?: Record<string, string> } = () => ({ status: 200, body: 'ok' });

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        this.requests.push(recorded);
        if (this.hold?.(recorded)) {
          this.held.push(res);
          return;
        }
        const answer = this.respond(recorded);
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    for (const res of this.held.splice(0)) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

export interface ExecutionApp {
  sut: TestApp;
  ws: string;
  owner: string;
  scriptsDir: string;
  port: number;
  writeScript(name: string, yaml: string): void;
  /** Creates the worker from YAML, deploys its latest version and answers the deployment id. */
  deploy(yaml: string): Promise<string>;
  startRun(deploymentId: string, input?: unknown): Promise<string>;
  runState(runId: string): Promise<string>;
  waitForState(runId: string, states: readonly string[], timeoutMs?: number): Promise<string>;
  events(runId: string): Promise<Array<{ type: string; data: Record<string, unknown>; version: number }>>;
  close(): Promise<void>;
}

/** The all-in-one app with the supervisor on, a scripts directory and a signed-in owner. */
export async function startExecutionApp(options: { allowPrivate?: string[]; env?: Record<string, string>; replicaOf?: ExecutionApp; freshBus?: boolean } = {}): Promise<ExecutionApp> {
  const scriptsDir = options.replicaOf?.scriptsDir ?? mkdtempSync(join(tmpdir(), 'pa-scripts-'));
  const port = await freePort();
  const sut = await startTestApp(
    {
      PACKETAGENT_PORT: String(port),
      PACKETAGENT_SUPERVISOR_ENABLED: 'true',
      PACKETAGENT_SUPERVISOR_LEASE_MS: '2000',
      PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS: '250',
      PACKETAGENT_SCRIPTS_DIR: scriptsDir,
      PACKETAGENT_HTTP_ALLOW_PRIVATE: [`127.0.0.1:${port}`, ...(options.allowPrivate ?? [])].join(','),
      ...options.env,
    },
    options.replicaOf?.sut,
    { freshBus: options.freshBus ?? false },
  );
  let ws = options.replicaOf?.ws ?? '';
  let owner = options.replicaOf?.owner ?? '';
  if (!options.replicaOf) {
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'operator@example.com', password: 'correct horse battery staple', workspace: 'Operations' },
    });
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
  }
  const auth = () => bearer(owner);
  const app: ExecutionApp = {
    sut,
    ws,
    owner,
    scriptsDir,
    port,
    writeScript: (name, yaml) => writeFileSync(join(scriptsDir, `${name}.yaml`), yaml),
    async deploy(yaml) {
      const name = /^name:\s*(\S+)/m.exec(yaml)?.[1] ?? 'worker';
      const worker = await sut.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/workers`, { body: { name }, headers: auth() });
      if (worker.status !== 201) throw new Error(`worker not created: ${worker.status} ${worker.text}`);
      const version = await sut.request('POST', `/api/v1/workspaces/${ws}/workers/${worker.body.id}/versions`, { raw: yaml, headers: { ...auth(), 'content-type': 'application/yaml' } });
      if (version.status !== 201) throw new Error(`version not created: ${version.status} ${version.text}`);
      // Execution tests deploy workers whose credentials are stored later, or never, to see how
      // a run fails; refusing an unready deployment is tested in templates.int.spec.ts.
      const deployment = await sut.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/deployments`, { body: { workerId: worker.body.id, acceptMissing: true }, headers: auth() });
      if (deployment.status !== 201) throw new Error(`deployment not created: ${deployment.status} ${deployment.text}`);
      return deployment.body.id;
    },
    async startRun(deploymentId, input = {}) {
      const run = await sut.request<{ runId: string }>('POST', `/api/v1/workspaces/${ws}/deployments/${deploymentId}/runs`, { body: { input }, headers: auth() });
      if (run.status !== 201) throw new Error(`run not started: ${run.status} ${run.text}`);
      return run.body.runId;
    },
    async runState(runId) {
      return (await sut.request<{ state: string }>('GET', `/api/v1/workspaces/${ws}/runs/${runId}`, { headers: auth() })).body.state;
    },
    async waitForState(runId, states, timeoutMs = 20_000) {
      return eventually(async () => {
        const state = await app.runState(runId);
        return states.includes(state) && state;
      }, { timeoutMs, what: `run ${runId} to be ${states.join(' or ')}` });
    },
    async events(runId) {
      const { rows } = await sut.db.pool.query<{ type: string; data: Record<string, unknown>; stream_version: string }>(
        'SELECT type, data, stream_version FROM events WHERE stream_id = $1 ORDER BY stream_version',
        [runStreamId(runId)],
      );
      return rows.map((row) => ({ type: row.type, data: row.data, version: Number(row.stream_version) }));
    },
    async close() {
      await sut.close();
      if (!options.replicaOf) rmSync(scriptsDir, { recursive: true, force: true });
    },
  };
  return app;
}

/** A scripted worker started by hand that finishes on `done`, with `body` (tools, notifications...) appended. */
export function manualWorker(name: string, body: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Do the task.
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
${body}
`;
}

/** A script turn that finishes the run with its one criterion met. */
export const FINISH_TURN = `  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true, evidence: it was done }] } }]\n`;

/** The example worker and its script, pointed at this app and a stand-in webhook. */
export function healthReportExample(appPort: number): { worker: string; script: string } {
  const at = (text: string) => text.replaceAll('http://127.0.0.1:8484', `http://127.0.0.1:${appPort}`);
  return {
    worker: at(readFileSync(join(EXAMPLES, 'health-report.worker.yaml'), 'utf8')),
    script: at(readFileSync(join(EXAMPLES, 'scripts/health-report.yaml'), 'utf8')),
  };
}
