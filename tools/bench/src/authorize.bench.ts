import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandBus, topology } from '@packetagent/bus';
import { DomainError, PolicyCommands, type AuthorizeRequest, type AuthorizeResult } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { closedLoop, cpuFrom, expectStatus, relayIdle, request, ROOT, startApp, type App, type CpuUse } from './app-process';
import { now, summarise, type Summary } from './stats';

export interface AuthorizeOptions {
  /** Sequential calls of each path before measuring (JIT, connections, plans). */
  warmup: number;
  /** Calls one at a time, per path. */
  sequential: number;
  clients: number;
  /** Calls per saturation case. */
  saturationCount: number;
}

export interface AuthorizeCaseResult {
  kind: string;
  clients: number;
  /** Distinct runs the calls name; null for the echo. */
  runs: number | null;
  /** Calls answered. */
  count: number;
  /** Calls that failed instead of answering, by error code. */
  failed: Record<string, number>;
  perSecond: number;
  latencyMs: Summary;
  cpu: CpuUse;
}

export interface AuthorizeResults {
  /** Bytes of the JSON request body, which the echo sends too. */
  payloadBytes: number;
  sequential: { authorize: Summary; echo: Summary; cpu: { authorize: CpuUse; echo: CpuUse } };
  saturation: { hot: AuthorizeCaseResult; spread: AuthorizeCaseResult; echo: AuthorizeCaseResult };
  /** Every answered call appended one policy.decided event; failed ones none. */
  verified: { answered: number; decidedEvents: number };
}

const ARGUMENTS = { method: 'GET', url: 'https://ci.example.com/builds/123' };
const CALL_DIGEST = createHash('sha256').update(JSON.stringify(ARGUMENTS)).digest('hex');

function codeOf(error: unknown): string {
  if (error instanceof DomainError) return error.code;
  return error instanceof Error ? error.name : 'unknown';
}

/**
 * Tool-call authorisation through the compiled app: a NATS request/reply from here to policy,
 * whose transaction reads the run, its deployment and its compiled grants, checks the call and
 * appends `policy.decided` to `policy-<runId>`, beside a bare NATS echo of the same payload.
 */
export async function benchAuthorize(options: AuthorizeOptions): Promise<AuthorizeResults> {
  const app = await startApp();
  try {
    const { workspaceId } = app.setup;
    const workerId = await applyExample(app);
    const hot = await startRun(app, workerId);
    const spread: string[] = [];
    for (let c = 0; c < options.clients; c++) spread.push(await startRun(app, workerId));

    const bus = new CommandBus(app.bus.nc, topology(app.bus.prefix));
    const call = (runId: string): AuthorizeRequest => ({
      workspaceId,
      runId,
      tool: 'http_fetch',
      verb: 'GET',
      resource: 'https://ci.example.com/builds/123',
      credentials: [],
      callDigest: CALL_DIGEST,
      arguments: ARGUMENTS,
      requester: { kind: 'service', id: 'supervisor' },
    });
    let answered = 0;
    const authorize = async (runId: string): Promise<AuthorizeResult> => {
      const result = await bus.request(PolicyCommands.authorize, call(runId));
      answered++;
      return result;
    };
    const allowed = async (runId: string): Promise<number> => {
      const t0 = now();
      const result = await authorize(runId);
      const ms = now() - t0;
      // Anything but an allow would measure another path through the decision.
      if (result.decision !== 'allow') throw new Error(`a benchmark call answered ${result.decision} (${result.reason.code}) instead of allow`);
      return ms;
    };

    // Policy learns runs from run.admitted through the relay; until then a call is denied as unknown_run.
    for (const runId of [hot, ...spread]) {
      await eventually(async () => (await authorize(runId)).decision === 'allow', { timeoutMs: 60_000, intervalMs: 50, what: `policy to know run ${runId}` });
    }

    const subject = `${app.bus.prefix}.bench.echo`;
    const echo = app.bus.nc.subscribe(subject, { callback: (_error, message) => void message.respond(message.data) });
    const payload = JSON.stringify(call(hot));
    const echoOnce = async (): Promise<number> => {
      const t0 = now();
      await app.bus.nc.request(subject, payload, { timeout: 5_000 });
      return now() - t0;
    };

    const sequential = async (count: number, op: () => Promise<number>): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < count; i++) out.push(await op());
      return out;
    };
    await sequential(options.warmup, echoOnce);
    await sequential(options.warmup, () => allowed(hot));
    await settle(app);
    let cpu = await cpuFrom(app);
    const echoSequential = await sequential(options.sequential, echoOnce);
    const echoSequentialCpu = await cpu();
    cpu = await cpuFrom(app);
    const authorizeSequential = await sequential(options.sequential, () => allowed(hot));
    const authorizeSequentialCpu = await cpu();

    const saturationCase = async (kind: string, runs: number | null, op: (k: number) => Promise<number>): Promise<AuthorizeCaseResult> => {
      await settle(app);
      const failed: Record<string, number> = {};
      const start = await cpuFrom(app);
      const latencies: number[] = [];
      const loop = await closedLoop(options.clients, options.saturationCount, async (k) => {
        const t0 = now();
        try {
          latencies.push(await op(k));
        } catch (error) {
          const code = codeOf(error);
          failed[code] = (failed[code] ?? 0) + 1;
        }
        return now() - t0;
      });
      const used = await start();
      if (latencies.length === 0) throw new Error(`every call of "${kind}" failed: ${JSON.stringify(failed)}`);
      return { kind, clients: options.clients, runs, count: latencies.length, failed, perSecond: latencies.length / loop.seconds, latencyMs: summarise(latencies), cpu: used };
    };
    const echoLoop = await saturationCase('bare NATS request/reply (echo)', null, echoOnce);
    echo.unsubscribe();
    // No two calls name the same run at once, as a run's calls come one at a time from its supervisor loop.
    const idle = [...spread];
    const spreadLoop = await saturationCase('authorize, a run per client', options.clients, async () => {
      const runId = idle.shift()!;
      try {
        return await allowed(runId);
      } finally {
        idle.push(runId);
      }
    });
    const hotLoop = await saturationCase('authorize, every client on one run', 1, () => allowed(hot));
    await relayIdle(app);

    const { rows } = await app.db.pool.query<{ decided: number }>(`SELECT count(*)::int AS decided FROM events WHERE type = 'policy.decided'`);
    const verified = { answered, decidedEvents: rows[0]!.decided };
    if (verified.decidedEvents !== answered) throw new Error(`${answered} calls were answered, but ${verified.decidedEvents} policy.decided events exist`);

    return {
      payloadBytes: Buffer.byteLength(payload),
      sequential: {
        authorize: summarise(authorizeSequential),
        echo: summarise(echoSequential),
        cpu: { authorize: authorizeSequentialCpu, echo: echoSequentialCpu },
      },
      saturation: { hot: hotLoop, spread: spreadLoop, echo: echoLoop },
      verified,
    };
  } finally {
    await app.stop();
  }
}

/** Relay work and dirty pages left by the previous case must not land in the next one. */
async function settle(app: App): Promise<void> {
  await relayIdle(app);
  await app.db.pool.query('CHECKPOINT').catch(() => undefined);
}

/** The example worker, which grants http_fetch GET on https://ci.example.com/* with approval never; returns its id. */
async function applyExample(app: App): Promise<string> {
  const { workspaceId, apiKey } = app.setup;
  const auth = { authorization: `Bearer ${apiKey}` };
  const api = (path: string) => `${app.baseUrl}/api/v1/workspaces/${workspaceId}${path}`;
  const worker = await request<{ id: string }>(api('/workers'), 'POST', { body: { name: 'release-audit' }, headers: auth });
  expectStatus(worker, 201, 'creating the worker');
  const definition = readFileSync(join(ROOT, 'examples/release-audit.worker.yaml'), 'utf8');
  const version = await request(api(`/workers/${worker.body.id}/versions`), 'POST', { raw: definition, headers: { ...auth, 'content-type': 'application/yaml' } });
  expectStatus(version, 201, 'applying the worker version');
  return worker.body.id;
}

/** A deployment of the example worker with one admitted run; returns the run's id. */
async function startRun(app: App, workerId: string): Promise<string> {
  const { workspaceId, apiKey } = app.setup;
  const auth = { authorization: `Bearer ${apiKey}` };
  const api = (path: string) => `${app.baseUrl}/api/v1/workspaces/${workspaceId}${path}`;
  const deployed = await request<{ id: string }>(api('/deployments'), 'POST', { body: { workerId, acceptMissing: true }, headers: auth });
  expectStatus(deployed, 201, 'deploying');
  const started = await request<{ runId: string; hold: string | null }>(api(`/deployments/${deployed.body.id}/runs`), 'POST', {
    body: { input: { release: '2026.11.3' }, idempotencyKey: randomBytes(12).toString('hex') },
    headers: auth,
  });
  expectStatus(started, 201, 'starting a run');
  // Policy learns only admitted runs.
  if (started.body.hold !== null) throw new Error(`the run was held (${started.body.hold}) instead of admitted`);
  return started.body.runId;
}
