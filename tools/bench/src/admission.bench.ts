import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { Pool } from 'pg';
import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { runStreamId } from '@packetagent/contracts';
import { closedLoop, cpuFrom, expectStatus, relayIdle, request, ROOT, startApp, type CpuUse } from './app-process';
import { now, paced, summarise, until, type Summary } from './stats';

export type { CpuUse } from './app-process';

/** A deployment admits at most this many concurrent runs, and nothing ends a run here. */
const MAX_CONCURRENT_RUNS = 1_000;

export interface AdmissionOptions {
  ratePerSecond: number;
  warmupSeconds: number;
  seconds: number;
  clients: number;
  saturationCount: number;
  /** Sequential requests per row of the breakdown table. */
  breakdownSamples: number;
}

export interface ClosedLoopResult {
  kind: string;
  clients: number;
  deployments: number | null;
  count: number;
  perSecond: number;
  latencyMs: Summary;
  cpu: CpuUse;
}

export interface AdmissionResults {
  /** Deployments the round-robin activations were spread over. */
  deployments: number;
  steady: {
    ratePerSecond: number;
    seconds: number;
    ours: Summary;
    baseline: Summary;
    /** addJob alone: until the job row is committed, before any worker sees it. */
    baselineAddJob: Summary;
    cpu: { ours: CpuUse; baseline: CpuUse };
  };
  saturation: { ours: ClosedLoopResult; oursOneDeployment: ClosedLoopResult; baseline: ClosedLoopResult };
  /** One request at a time on an idle system: what each hop of an activation costs. */
  breakdown: { kind: string; latencyMs: Summary }[];
  verified: { created: number; admittedEvents: number; checkedRightAfterResponse: number };
}

// ---------------------------------------------------------------------------------------------
// Activations through the app.

/** Manual activations through the public API, spread round-robin over the deployments. */
class Activations {
  readonly runIds: string[] = [];
  private next = 0;

  constructor(
    private readonly url: (deploymentId: string) => string,
    private readonly apiKey: string,
    private readonly deployments: string[],
  ) {}

  /** Activation to 201; the reply comes after the transaction holding run.admitted committed. */
  async activate(tag: string, deploymentId = this.deployments[this.next++ % this.deployments.length]!): Promise<{ ms: number; runId: string }> {
    const t0 = now();
    const response = await fetch(this.url(deploymentId), {
      method: 'POST',
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { release: '2026.11.3' }, idempotencyKey: `${tag}-${this.runIds.length}-${randomBytes(6).toString('hex')}` }),
    });
    const body = (await response.json()) as { runId?: string; hold?: string | null; code?: string };
    const ms = now() - t0;
    if (response.status !== 201 || !body.runId) throw new Error(`activation answered ${response.status} ${body.code ?? ''}, expected 201`);
    // A held run would mean the benchmark measured deferral, not admission.
    if (body.hold !== null) throw new Error(`activation was held (${String(body.hold)}) instead of admitted`);
    this.runIds.push(body.runId);
    return { ms, runId: body.runId };
  }
}

async function admittedEventExists(db: TestDatabase, runId: string): Promise<boolean> {
  const { rowCount } = await db.pool.query(`SELECT 1 FROM events WHERE stream_id = $1 AND type = 'run.admitted'`, [runStreamId(runId)]);
  return rowCount === 1;
}

// ---------------------------------------------------------------------------------------------
// The baseline: graphile-worker on its own database on the same server.

interface Baseline {
  utils: WorkerUtils;
  /** addJob to the task function starting, in ms, by job id. */
  started: Map<string, number>;
  whenStarted(id: string): Promise<void>;
  stop(): Promise<void>;
}

function isBenchPayload(payload: unknown): payload is { id: string; t0: number } {
  const p = payload as { id?: unknown; t0?: unknown } | null;
  return typeof p?.id === 'string' && typeof p.t0 === 'number';
}

async function startBaseline(): Promise<Baseline> {
  const db = await createTestDatabase({ empty: true });
  const started = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const logger = new Logger(() => (level, message) => {
    if (String(level) === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
  // Pools of our own: graphile-worker does not wait for the pools it creates to end, and
  // dropping the database under them would then fail on connections it still holds.
  const runnerPool = new Pool({ connectionString: db.url, max: 10 });
  // As many connections as the app's pool, so neither side is held back by its pool.
  const utilsPool = new Pool({ connectionString: db.url, max: 20 });
  for (const pool of [runnerPool, utilsPool]) {
    // Connections cut at the drop are expected; anything before it fails the phase through its query.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
  }
  let runner: Runner | null = null;
  let utils: WorkerUtils | null = null;
  const stop = async () => {
    await runner?.stop().catch(() => undefined);
    await Promise.resolve(utils?.release()).catch(() => undefined);
    await Promise.all([runnerPool.end(), utilsPool.end()]).catch(() => undefined);
    await db.drop().catch(() => undefined);
  };
  try {
    runner = await run({
      pgPool: runnerPool,
      concurrency: 10,
      noHandleSignals: true,
      pollInterval: 1_000,
      logger,
      taskList: {
        bench: async (payload) => {
          const at = now();
          if (!isBenchPayload(payload)) throw new Error('unexpected payload');
          started.set(payload.id, at - payload.t0);
          waiters.get(payload.id)?.();
          waiters.delete(payload.id);
        },
      },
    });
    utils = await makeWorkerUtils({ pgPool: utilsPool, logger });
    return {
      utils,
      started,
      whenStarted: (id) => (started.has(id) ? Promise.resolve() : new Promise<void>((done) => waiters.set(id, done))),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function loopResult(kind: string, clients: number, deployments: number | null, loop: { latencies: number[]; seconds: number }, cpu: CpuUse): ClosedLoopResult {
  return { kind, clients, deployments, count: loop.latencies.length, perSecond: loop.latencies.length / loop.seconds, latencyMs: summarise(loop.latencies), cpu };
}

// ---------------------------------------------------------------------------------------------

/**
 * Manual activation through the compiled app (HTTP, gateway, NATS request/reply, intake's
 * admission transaction) against graphile-worker's addJob to task start, on the same Postgres.
 */
export async function benchAdmission(options: AdmissionOptions): Promise<AdmissionResults> {
  const warmupCount = Math.round(options.ratePerSecond * options.warmupSeconds);
  const steadyCount = Math.round(options.ratePerSecond * options.seconds);
  const roundRobinTotal = warmupCount + steadyCount + options.saturationCount + options.breakdownSamples;
  // Enough deployments that none ever reaches its limit (every activation is admitted, none
  // held), and at least one per client so saturation measures admission, not one row lock.
  const deploymentCount = Math.max(options.clients, Math.ceil(roundRobinTotal / MAX_CONCURRENT_RUNS));
  const oneDeploymentCount = Math.min(options.saturationCount, MAX_CONCURRENT_RUNS);

  const app = await startApp();
  try {
    const { workspaceId, apiKey } = app.setup;
    const auth = { authorization: `Bearer ${apiKey}` };
    const api = (path: string) => `${app.baseUrl}/api/v1/workspaces/${workspaceId}${path}`;
    const worker = await request<{ id: string }>(api('/workers'), 'POST', { body: { name: 'release-audit' }, headers: auth });
    expectStatus(worker, 201, 'creating the worker');
    const example = readFileSync(join(ROOT, 'examples/release-audit.worker.yaml'), 'utf8');
    const definition = example.replace(/^bounds: \{([^}]*)\}/m, `bounds: {$1, maxConcurrentRuns: ${MAX_CONCURRENT_RUNS} }`);
    if (definition === example) throw new Error('examples/release-audit.worker.yaml has no one-line `bounds: {...}` to raise maxConcurrentRuns in');
    const version = await request(api(`/workers/${worker.body.id}/versions`), 'POST', {
      raw: definition,
      headers: { ...auth, 'content-type': 'application/yaml' },
    });
    expectStatus(version, 201, 'applying the worker version');
    const deployments: string[] = [];
    for (let i = 0; i <= deploymentCount; i++) {
      const deployed = await request<{ id: string }>(api('/deployments'), 'POST', { body: { workerId: worker.body.id, acceptMissing: true }, headers: auth });
      expectStatus(deployed, 201, 'deploying');
      deployments.push(deployed.body.id);
    }
    // The last one serves the single-deployment saturation run alone.
    const lone = deployments.pop()!;
    const ours = new Activations((id) => api(`/deployments/${id}/runs`), apiKey, deployments);

    const baseline = await startBaseline();
    try {
      const addJob = async (id: string): Promise<number> => {
        const t0 = now();
        await baseline.utils.addJob('bench', { id, t0 });
        return now() - t0;
      };

      // Warm-up (JIT, connections, plans) of both paths. Here, and only here, every run is looked
      // up right after its 201, from another connection: the reply must follow the commit.
      let checkedRightAfterResponse = 0;
      await paced(warmupCount, options.ratePerSecond, 32, async () => {
        const { runId } = await ours.activate('warm');
        if (!(await admittedEventExists(app.db, runId))) throw new Error(`run ${runId} answered 201 before its run.admitted event was visible`);
        checkedRightAfterResponse++;
      });
      await paced(warmupCount, options.ratePerSecond, 32, async (k) => void (await addJob(`warm-${k}`)));
      await until(() => baseline.started.size >= warmupCount, 'the warm-up jobs to start');
      await relayIdle(app);
      await app.db.pool.query('CHECKPOINT').catch(() => undefined);

      // Steady load: baseline first, then ours, at the same rate.
      const addJobLatencies: number[] = [];
      const steadyIds = Array.from({ length: steadyCount }, (_, k) => `steady-${k}`);
      let cpu = await cpuFrom(null);
      await paced(steadyCount, options.ratePerSecond, 32, async (k) => void addJobLatencies.push(await addJob(steadyIds[k]!)));
      await until(() => steadyIds.every((id) => baseline.started.has(id)), 'the steady jobs to start');
      const baselineSteadyCpu = await cpu();
      const baselineSteady = steadyIds.map((id) => baseline.started.get(id)!);
      const oursSteady: number[] = [];
      cpu = await cpuFrom(app);
      await paced(steadyCount, options.ratePerSecond, 32, async () => void oursSteady.push((await ours.activate('steady')).ms));
      const oursSteadyCpu = await cpu();
      await relayIdle(app);

      // Saturation: closed-loop clients, as fast as each answer comes back.
      cpu = await cpuFrom(null);
      const baselineLoop = await closedLoop(options.clients, options.saturationCount, async (k) => {
        const id = `sat-${k}`;
        const started = baseline.whenStarted(id);
        await addJob(id);
        await started;
        return baseline.started.get(id)!;
      });
      const baselineLoopCpu = await cpu();
      cpu = await cpuFrom(app);
      const oursLoop = await closedLoop(options.clients, options.saturationCount, async () => (await ours.activate('sat')).ms);
      const oursLoopCpu = await cpu();
      await relayIdle(app);
      cpu = await cpuFrom(app);
      const loneLoop = await closedLoop(options.clients, oneDeploymentCount, async () => (await ours.activate('lone', lone)).ms);
      const loneLoopCpu = await cpu();
      await relayIdle(app);

      // Breakdown, one request at a time, each row adding a hop: HTTP alone; authentication and a
      // read in the gateway; the NATS request/reply to intake and a read there; the admission
      // transaction. The bare NATS round trip is measured from here.
      const sequential = async (op: () => Promise<void>): Promise<Summary> => {
        const out: number[] = [];
        for (let i = 0; i < options.breakdownSamples; i++) {
          const t0 = now();
          await op();
          out.push(now() - t0);
        }
        return summarise(out);
      };
      const healthz = await sequential(async () => {
        const response = await fetch(`${app.baseUrl}/healthz`);
        if (response.status !== 200) throw new Error(`healthz answered ${response.status}`);
        await response.text();
      });
      const gatewayRead = await sequential(async () => {
        const response = await fetch(api('/api-keys'), { headers: auth });
        if (response.status !== 200) throw new Error(`listing API keys answered ${response.status}`);
        await response.text();
      });
      const read = await sequential(async () => {
        const response = await fetch(api(`/deployments/${deployments[0]!}`), { headers: auth });
        if (response.status !== 200) throw new Error(`reading a deployment answered ${response.status}`);
        await response.text();
      });
      const activation = await sequential(async () => void (await ours.activate('seq')));
      const subject = `${app.bus.prefix}.bench.echo`;
      const echo = app.bus.nc.subscribe(subject, { callback: (_error, message) => void message.respond(message.data) });
      const command = JSON.stringify({ workspaceId, deploymentId: deployments[0], source: 'manual', input: { release: '2026.11.3' }, dedupeKey: 'x'.repeat(40) });
      const natsHop = await sequential(async () => void (await app.bus.nc.request(subject, command, { timeout: 5_000 })));
      echo.unsubscribe();
      await relayIdle(app);

      // Every 201 must have its run.admitted event, and there must be no other.
      const { rows } = await app.db.pool.query<{ ours: number; all: number }>(
        `SELECT count(*) FILTER (WHERE stream_id = ANY($1))::int AS ours, count(*)::int AS all
           FROM events WHERE type = 'run.admitted' AND data->'activation'->>'source' = 'manual'`,
        [ours.runIds.map(runStreamId)],
      );
      const created = new Set(ours.runIds).size;
      if (created !== ours.runIds.length) throw new Error('two activations answered with the same run');
      if (rows[0]!.ours !== created || rows[0]!.all !== created) {
        throw new Error(`${created} activations answered 201 but ${rows[0]!.ours} of them (${rows[0]!.all} in all) have a run.admitted event`);
      }

      return {
        deployments: deployments.length,
        steady: {
          ratePerSecond: options.ratePerSecond,
          seconds: options.seconds,
          ours: summarise(oursSteady),
          baseline: summarise(baselineSteady),
          baselineAddJob: summarise(addJobLatencies),
          cpu: { ours: oursSteadyCpu, baseline: baselineSteadyCpu },
        },
        saturation: {
          ours: loopResult('ours: activation -> 201', options.clients, deployments.length, oursLoop, oursLoopCpu),
          oursOneDeployment: loopResult('ours, one deployment', options.clients, 1, loneLoop, loneLoopCpu),
          baseline: loopResult('graphile-worker: addJob -> task start', options.clients, null, baselineLoop, baselineLoopCpu),
        },
        breakdown: [
          { kind: 'GET /healthz (HTTP hop)', latencyMs: healthz },
          { kind: 'GET api-keys (HTTP + API key + one read in the gateway)', latencyMs: gatewayRead },
          { kind: 'GET deployment (HTTP + API key + NATS request/reply + one read in intake)', latencyMs: read },
          { kind: 'POST runs (activation, admitted and committed)', latencyMs: activation },
          { kind: 'bare NATS request/reply (echo)', latencyMs: natsHop },
        ],
        verified: { created, admittedEvents: rows[0]!.ours, checkedRightAfterResponse },
      };

    } finally {
      await baseline.stop();
    }
  } finally {
    await app.stop();
  }
}
