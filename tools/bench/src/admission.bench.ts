import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from 'graphile-worker';
import { Pool } from 'pg';
import {
  createTestBus,
  createTestDatabase,
  createTestRedis,
  eventually,
  exitOf,
  freePort,
  testEnv,
  type TestBus,
  type TestDatabase,
  type TestRedis,
} from '@packetagent/testing';
import { now, paced, sleep, summarise, until, type Summary } from './stats';

const ROOT = resolve(__dirname, '../../..');
const ENTRY = join(ROOT, 'dist/services/all-in-one/src/main.js');
/** A deployment admits at most this many concurrent runs, and nothing ends a run here. */
const MAX_CONCURRENT_RUNS = 1_000;



/** `clients` loops, each starting its next operation when its previous one finished, until `count` were started. */
async function closedLoop(clients: number, count: number, op: (k: number) => Promise<number>): Promise<{ latencies: number[]; seconds: number }> {
  let issued = 0;
  const latencies: number[] = [];
  const started = now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (issued < count) latencies.push(await op(issued++));
    }),
  );
  return { latencies, seconds: (now() - started) / 1_000 };
}

export interface AdmissionOptions {
  ratePerSecond: number;
  warmupSeconds: number;
  seconds: number;
  clients: number;
  saturationCount: number;
  /** Sequential requests per row of the breakdown table. */
  breakdownSamples: number;
}

/** Average cores busy during a phase: the whole machine, the app's process, this process. */
export interface CpuUse {
  machine: number | null;
  app: number | null;
  bench: number;
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
// The compiled all-in-one app as a child process.

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules') continue;
    const path = join(dir, entry);
    // Files come and go while others edit the tree.
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) newest = Math.max(newest, newestSourceMtime(path));
    else if ((/\.ts$/.test(entry) && !/\.(spec|testkit)\.ts$/.test(entry)) || entry.endsWith('.sql')) newest = Math.max(newest, stat.mtimeMs);
  }
  return newest;
}

/** Builds dist/ unless it is newer than every source it is compiled from. */
function ensureBuilt(): void {
  const built = existsSync(ENTRY) ? statSync(ENTRY).mtimeMs : 0;
  const sources = Math.max(...['libs', 'services', 'tools/cli/src'].map((dir) => newestSourceMtime(join(ROOT, dir))));
  if (built > sources) return;
  process.stdout.write('dist/ is older than the sources: building it (node tools/dev/build.mjs)\n');
  const build = spawnSync(process.execPath, [join(ROOT, 'tools/dev/build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`the build failed with exit code ${String(build.status)}`);
}

interface Answer<T> {
  status: number;
  body: T;
}

interface App {
  baseUrl: string;
  db: TestDatabase;
  bus: TestBus;
  /** The owner's workspace and API key, from first-run setup. */
  setup: { workspaceId: string; apiKey: string };
  stop(): Promise<void>;
}

async function request<T>(url: string, method: string, options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

async function startApp(): Promise<App> {
  ensureBuilt();
  // Empty: the app migrates its database itself, as in production.
  const db = await createTestDatabase({ empty: true });
  const cleanups: (() => Promise<void>)[] = [() => db.drop()];
  let child: ChildProcess | null = null;
  let output = '';
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const exited = await Promise.race([exitOf(child).then(() => true), sleep(20_000).then(() => false)]);
      if (!exited) child.kill('SIGKILL');
    }
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const bus = await createTestBus();
    cleanups.push(() => bus.cleanup());
    const redis: TestRedis = await createTestRedis();
    cleanups.push(() => redis.cleanup());
    const dataDir = mkdtempSync(join(tmpdir(), 'pa-bench-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const setupToken = randomBytes(24).toString('base64url');
    child = spawn(process.execPath, [ENTRY], {
      cwd: ROOT,
      env: {
        ...process.env,
        PACKETAGENT_PORT: String(port),
        PACKETAGENT_DATABASE_URL: db.url,
        PACKETAGENT_DATABASE_POOL_SIZE: '20',
        PACKETAGENT_NATS_URL: testEnv.natsUrl,
        PACKETAGENT_BUS_PREFIX: bus.prefix,
        PACKETAGENT_REDIS_URL: redis.url,
        PACKETAGENT_REDIS_KEY_PREFIX: redis.keyPrefix,
        PACKETAGENT_DATA_DIR: dataDir,
        PACKETAGENT_SETUP_TOKEN: setupToken,
        PACKETAGENT_LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = child;
    // Only the tail is kept, to explain a failed start.
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-16_000));
    started.stdout?.on('data', keep);
    started.stderr?.on('data', keep);
    // A crash of this process must not leave the app running.
    const killOnExit = () => started.kill('SIGKILL');
    process.once('exit', killOnExit);
    cleanups.push(async () => void process.off('exit', killOnExit));

    const baseUrl = `http://127.0.0.1:${port}`;
    const crashed = exitOf(started).then((code) => Promise.reject(new Error(`the app exited with code ${String(code)}:\n${output}`)));
    const ready = eventually(async () => (await fetch(`${baseUrl}/readyz`)).status === 200, { timeoutMs: 60_000, intervalMs: 100, what: 'the app to be ready' });
    // The app's exit at stop() rejects this too; that is expected then.
    crashed.catch(() => undefined);
    await Promise.race([ready, crashed]).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output}`);
    });

    const setup = await request<{ workspaceId: string; apiKey: string }>(`${baseUrl}/api/v1/setup`, 'POST', {
      body: { token: setupToken, email: 'bench@example.com', password: randomBytes(18).toString('base64url'), workspace: 'Bench' },
    });
    expectStatus(setup, 201, 'setup');
    return { baseUrl, db, bus, setup: setup.body, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function expectStatus(answer: Answer<unknown>, status: number, what: string): void {
  if (answer.status === status) return;
  const code = (answer.body as { code?: unknown } | null)?.code;
  throw new Error(`${what} answered ${answer.status}${typeof code === 'string' ? ` (${code})` : ''}, expected ${status}`);
}

/** Relay work left over from one phase must not land in the next one's measurements. */
async function relayIdle(app: App): Promise<void> {
  await eventually(
    async () => {
      const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
      return /^packetagent_relay_backlog_events 0$/m.test(text);
    },
    { timeoutMs: 60_000, intervalMs: 50, what: 'the relay to publish every committed event' },
  );
}

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
  const { rowCount } = await db.pool.query(`SELECT 1 FROM events WHERE stream_id = $1 AND type = 'run.admitted'`, [`run-${runId}`]);
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

/** Busy and total jiffies of the machine from /proc/stat; null where there is no /proc. */
function machineTicks(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = fields.reduce((sum, value) => sum + value, 0);
    return { busy: total - fields[3]! - fields[4]!, total };
  } catch {
    return null;
  }
}

async function appCpuSeconds(app: App): Promise<number> {
  const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return read('process_cpu_user_seconds_total') + read('process_cpu_system_seconds_total');
}

/** Starts measuring CPU use; the returned function ends the phase and reports cores busy. */
async function cpuFrom(app: App | null): Promise<() => Promise<CpuUse>> {
  const appStart = app ? await appCpuSeconds(app) : null;
  const machineStart = machineTicks();
  const benchStart = process.cpuUsage();
  const start = now();
  return async () => {
    const seconds = (now() - start) / 1_000;
    const bench = process.cpuUsage(benchStart);
    const machineEnd = machineTicks();
    const appEnd = app && appStart !== null ? await appCpuSeconds(app) : null;
    return {
      machine: machineStart && machineEnd ? ((machineEnd.busy - machineStart.busy) / (machineEnd.total - machineStart.total)) * availableParallelism() : null,
      app: appEnd !== null && appStart !== null ? (appEnd - appStart) / seconds : null,
      bench: (bench.user + bench.system) / 1e6 / seconds,
    };
  };
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
      const deployed = await request<{ id: string }>(api('/deployments'), 'POST', { body: { workerId: worker.body.id }, headers: auth });
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
        [ours.runIds.map((id) => `run-${id}`)],
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
