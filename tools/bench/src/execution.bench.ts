import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Logger, makeWorkerUtils, run, type Runner } from 'graphile-worker';
import { Pool } from 'pg';
import { topology } from '@packetagent/bus';
import { runIdFromStream, runStreamId } from '@packetagent/contracts';
import { createTestDatabase, eventually, type TestDatabase } from '@packetagent/testing';
import { closedLoop, firstRunSetup, relayIdle, spawnApp, startInfrastructure, type AppProcess } from './app-process';
import { combineCpu, cpuWithServersFrom, type CpuWithServers } from './server-cpu';
import { enableWalInspect, walFlushed, walWrites, type WalWrites } from './wal-writes';
import { attribute, countWindow, runMarks, type HopWindow, type RunMarks } from './hops';
import { startNatsTap } from './nats-tap';
import { startPgProxy } from './pg-proxy';
import { now, summarise, type Summary } from './stats';
import { deploy, FINISH_TURN, startRun, TERMINAL_TYPES, UPDATE_TURN, withScriptsDir, writeScript, type Pricing } from './execution-workers';
import { benchRecovery, type RecoveryResults, type RecoverySetting } from './recovery.bench';

export type { Pricing } from './execution-workers';
export type { RecoveryResults, RecoverySetting } from './recovery.bench';

export interface ExecutionOptions {
  /** Runs one at a time per pricing, each `stepsPerRun` scripted update_criteria steps and then finish. */
  steps: { warmupRuns: number; runs: number; stepsPerRun: number; commits: number };
  /**
   * Free no-op runs (one finish turn) from closed-loop clients, on two app processes, after
   * `oneAtATime` runs alone of each pricing; `baselineJobs` no-op jobs for graphile-worker,
   * which needs more to fill a measurement of a few seconds.
   */
  throughput: { clients: number; warmup: number; runs: number; oneAtATime: number; baselineJobs: number };
  /** A run held mid model call by a process that is SIGKILLed, `repeats` times per setting. */
  recovery: { repeats: number; settings: RecoverySetting[] };
  /**
   * No-op runs one at a time on one app process whose Postgres connections go through a proxy:
   * `runs` per pricing on a deployment the process has run before, `newDeploymentRuns` per
   * pricing each on a deployment of its own, after `warmupRuns`.
   */
  claimToModel: { warmupRuns: number; runs: number; newDeploymentRuns: number };
}

/** A summary with the mean, which keeps sub-millisecond detail that millisecond timestamps lose in percentiles. */
export interface Timing extends Summary {
  mean: number;
}

/** Steps of runs of one pricing, timed by the events they write. */
export interface StepVariant {
  pricing: Pricing;
  runs: number;
  /** Steps measured: each run's second to last update_criteria step (the first follows the run's start). */
  steps: number;
  /** One act checkpoint to the next: a model turn and a tool result, each committed with a checkpoint. */
  perStepMs: Timing;
  /** The same less the scripted model call (its run.model_turn durationMs): the step's own overhead. */
  perStepLessModelMs: Timing;
  /** Any checkpoint to the next. */
  perCheckpointMs: Timing;
  /** To the checkpoint after a model turn (the model call and, when priced, the reservation and settlement). */
  planCheckpointMs: Timing;
  /** To the checkpoint after a tool result (the control tool and one commit). */
  actCheckpointMs: Timing;
  /** A step cut at the timestamps of the events it writes; each part begins with the commit of the event it starts at. */
  parts: { kind: string; ms: Timing }[];
  /** The scripted model call as the router timed it (run.model_turn durationMs). */
  modelCallMs: Timing;
  /** Mean step in the first and the last quarter of each run: growth with the run's length. */
  firstQuarterStepMs: number;
  lastQuarterStepMs: number;
  /** Transactions that wrote events, per step, counted by their transaction ids. */
  transactionsPerStep: { runStream: number; withCheckpoint: number; budget: number };
  /** Every write transaction of the database per model turn (start and finish included), from the WAL; null without pg_walinspect. */
  writesPerTurn: WalWrites | null;
  cpu: CpuWithServers;
  /** CPU per model turn (start and finish included), in ms: cores busy times the runs' time over their turns. */
  cpuMsPerTurn: { machine: number | null; app: number | null; postgres: number | null };
}

export interface StepResults {
  stepsPerRun: number;
  database: { synchronousCommit: string; fsync: string };
  free: StepVariant;
  priced: StepVariant;
  /** Bytes (pg_column_size) of the event rows a checkpointed commit writes, on average. */
  checkpointCommitBytes: number;
  /** The baseline: one INSERT of a row of checkpointCommitBytes into a plain table, in autocommit. */
  commitMs: Timing;
  baselineCpu: CpuWithServers;
}

export interface ThroughputCase {
  kind: string;
  clients: number;
  count: number;
  /** From the first start to the last terminal event (ours) or job completion (baseline). */
  seconds: number;
  perSecond: number;
  /** Start request to the client learning of the end (ours: the terminal event over NATS). */
  loopMs: Summary;
  cpu: CpuWithServers;
}

/** No-op runs alone on the system, cut at the events they write. */
export interface NoopBreakdown {
  pricing: Pricing;
  count: number;
  /** POST to the 201 (run.admitted committed). */
  admissionMs: Timing;
  parts: { kind: string; ms: Timing }[];
  /** run.admitted to the terminal event. */
  totalMs: Timing;
}

export interface ThroughputResults {
  ours: ThroughputCase & {
    deployments: number;
    processes: number;
    admittedToTerminalMs: Summary;
    runsByReplica: number[];
    oneAtATime: NoopBreakdown[];
    /** Every write transaction of the database per run, from the WAL; null without pg_walinspect. */
    writesPerRun: WalWrites | null;
  };
  baseline: ThroughputCase & { runners: number; concurrencyPerRunner: number; writesPerJob: WalWrites | null };
}


/** The SQL statements and NATS messages of no-op runs alone, from the claim to the first model call. */
export interface ClaimToModelVariant {
  pricing: Pricing;
  /** `seen`: a deployment this process has run before (its effective definition cached); `new`: the deployment's first run. */
  deployment: 'seen' | 'new';
  runs: number;
  /** From the append of run.claimed. */
  fromClaim: HopWindow;
  /** From the claim's INSERT INTO supervisor.runs (right after the JetStream delivery of run.admitted). */
  fromWake: HopWindow;
  marks: RunMarks[];
}

export interface ClaimToModelResults {
  variants: ClaimToModelVariant[];
  /** Everything the proxy and the tap saw during the part, for scale. */
  statementsSeen: number;
  messagesSeen: number;
}

export interface ExecutionResults {
  steps: StepResults;
  throughput: ThroughputResults;
  claimToModel: ClaimToModelResults;
  recovery: RecoveryResults[];
}

/**
 * Learns of run ends as any subscriber would: the terminal events the relay publishes. A run may
 * end before anyone waits for it, so every end seen is kept.
 */
class RunEnds {
  private readonly ended = new Map<string, string>();
  private readonly waiters = new Map<string, (type: string) => void>();
  private readonly subscriptions: Subscription[];

  constructor(
    private readonly nc: NatsConnection,
    prefix: string,
    workspaceId: string,
  ) {
    const root = topology(prefix).eventsSubjectRoot;
    this.subscriptions = TERMINAL_TYPES.map((type) =>
      nc.subscribe(`${root}.${workspaceId}.run.${type}`, {
        callback: (error, message) => {
          if (error) return;
          let stream: unknown;
          try {
            stream = (message.json() as { stream?: unknown }).stream;
          } catch {
            return;
          }
          const runId = typeof stream === 'string' ? runIdFromStream(stream) : null;
          if (runId === null || this.ended.has(runId)) return;
          this.ended.set(runId, type);
          this.waiters.get(runId)?.(type);
          this.waiters.delete(runId);
        },
      }),
    );
  }

  /** The subscriptions are in place on the server once this resolves. */
  ready(): Promise<void> {
    return this.nc.flush();
  }

  /** The run's terminal event type; fails after `timeoutMs` rather than hang the benchmark. */
  wait(runId: string, timeoutMs = 120_000): Promise<string> {
    const type = this.ended.get(runId);
    if (type) return Promise.resolve(type);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(runId);
        reject(new Error(`run ${runId} did not end within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(runId, (ended) => {
        clearTimeout(timer);
        resolve(ended);
      });
    });
  }

  close(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }
}

/** Write counts divided by `count`: per turn, per run, per job. */
function per(writes: WalWrites, count: number): WalWrites {
  return { transactions: writes.transactions / count, byTables: Object.fromEntries(Object.entries(writes.byTables).map(([tables, n]) => [tables, n / count])) };
}

/**
 * Until the relays have published every committed event and the projector has applied them
 * all: the writes a stretch of runs caused are then in the WAL, and the next stretch starts quiet.
 */
async function settle(db: TestDatabase, apps: readonly AppProcess[]): Promise<void> {
  for (const app of apps) await relayIdle(app);
  let lag = { head: 0, applied: 0 };
  await eventually(
    async () => {
      const { rows } = await db.pool.query<{ head: string; applied: string | null }>(
        `SELECT (SELECT coalesce(max(global_position), 0) FROM events) AS head, (SELECT coalesce(min(position), 0) FROM projector.checkpoints) AS applied`,
      );
      lag = { head: Number(rows[0]!.head), applied: Number(rows[0]!.applied) };
      return lag.head <= lag.applied;
    },
    { timeoutMs: 180_000, intervalMs: 20, what: 'the projector to apply every event' },
  ).catch((error: Error) => {
    throw new Error(`${error.message} (events up to ${lag.head}, every projection at ${lag.applied} or beyond)`);
  });
}

function timing(samples: number[]): Timing {
  const mean = samples.length ? samples.reduce((sum, value) => sum + value, 0) / samples.length : Number.NaN;
  return { ...summarise(samples), mean };
}


// ---------------------------------------------------------------------------------------------
// 1. Per-step overhead against one commit.

interface RunEventRow {
  stream_id: string;
  version: number;
  type: string;
  at: number;
  phase: string | null;
  iteration: number | null;
  duration_ms: number | null;
  tx: string;
}

interface BudgetEventRow {
  run_id: string;
  stream_id: string;
  type: string;
  at: number;
  key: string | null;
  tx: string;
}

/** Where a step is cut, in order: each mark is the first event of a commit. */
const STEP_MARKS: Record<Pricing, { at: string; part: string }[]> = {
  free: [
    { at: 'act', part: 'tool result checkpoint -> model turn checkpoint (commit, next request, model call)' },
    { at: 'plan', part: 'model turn checkpoint -> tool result checkpoint (commit, control tool)' },
  ],
  priced: [
    { at: 'act', part: 'tool result checkpoint -> budget.reserved (commit, next request, reserve up to its append)' },
    { at: 'reserved', part: 'budget.reserved -> budget.settled (reserve commit and reply, model call, settle up to its append)' },
    { at: 'settled', part: 'budget.settled -> model turn checkpoint (settle commit and reply)' },
    { at: 'plan', part: 'model turn checkpoint -> tool result checkpoint (commit, control tool)' },
  ],
};

/** Reads each run's checkpoints (and, when priced, the budget events of its model turns) and cuts them into steps. */
async function analyseSteps(db: TestDatabase, pricing: Pricing, runIds: string[], stepsPerRun: number): Promise<Omit<StepVariant, 'cpu' | 'cpuMsPerTurn' | 'writesPerTurn'>> {
  const { rows: runRows } = await db.pool.query<RunEventRow>(
    `SELECT stream_id, stream_version::int AS version, type, extract(epoch FROM occurred_at)::float8 * 1000 AS at,
            data->>'phase' AS phase, (data->>'iteration')::int AS iteration, (data->>'durationMs')::float8 AS duration_ms, xmin::text AS tx
       FROM events WHERE stream_id = ANY($1) ORDER BY stream_id, stream_version`,
    [runIds.map(runStreamId)],
  );
  const { rows: budgetRows } = await db.pool.query<BudgetEventRow>(
    `SELECT data->>'runId' AS run_id, stream_id, type, extract(epoch FROM occurred_at)::float8 * 1000 AS at, data->>'idempotencyKey' AS key, xmin::text AS tx
       FROM events WHERE type IN ('budget.reserved', 'budget.settled') AND data->>'runId' = ANY($1)`,
    [runIds],
  );
  if ((pricing === 'free') !== (budgetRows.length === 0)) {
    throw new Error(`${budgetRows.length} budget events for ${pricing} runs: a free model reserves nothing, a priced one at every turn`);
  }
  const marks = STEP_MARKS[pricing];
  const steps: number[] = [];
  const checkpoints: number[] = [];
  const plans: number[] = [];
  const acts: number[] = [];
  const parts = marks.map(() => [] as number[]);
  const modelCalls: number[] = [];
  const lessModel: number[] = [];
  const firstQuarter: number[] = [];
  const lastQuarter: number[] = [];
  const tx = { runStream: 0, withCheckpoint: 0, budget: 0 };

  for (const runId of runIds) {
    const events = runRows.filter((row) => row.stream_id === runStreamId(runId));
    const ckpts = events.filter((row) => row.type === 'run.checkpoint');
    // Each update_criteria step checkpoints twice (plan, act); the finish turn once (plan).
    if (ckpts.length !== 2 * stepsPerRun + 1 || events.at(-1)?.type !== 'run.succeeded') {
      throw new Error(`run ${runId} has ${ckpts.length} checkpoints and ends with ${events.at(-1)?.type ?? 'nothing'}; expected ${2 * stepsPerRun + 1} and run.succeeded`);
    }
    for (let i = 1; i < ckpts.length; i++) {
      const interval = ckpts[i]!.at - ckpts[i - 1]!.at;
      checkpoints.push(interval);
      (ckpts[i]!.phase === 'plan' ? plans : acts).push(interval);
    }
    const checkpointOf = (iteration: number, phase: 'plan' | 'act') => ckpts.find((row) => row.iteration === iteration && row.phase === phase)!;
    // Reservations of this run's model turns by iteration; a settlement is in its reservation's stream.
    const budget = budgetRows.filter((row) => row.run_id === runId);
    const reservedOf = new Map<number, BudgetEventRow>();
    for (const row of budget) {
      const iteration = row.type === 'budget.reserved' ? /:model:(\d+):/.exec(row.key ?? '')?.[1] : undefined;
      if (iteration) reservedOf.set(Number(iteration), row);
    }
    const settledOf = (reserved: BudgetEventRow | undefined) => budget.find((row) => row.type === 'budget.settled' && row.stream_id === reserved?.stream_id);

    for (let k = 2; k <= stepsPerRun; k++) {
      const previousAct = checkpointOf(k - 1, 'act');
      const act = checkpointOf(k, 'act');
      const reserved = reservedOf.get(k);
      const settled = settledOf(reserved);
      const at: Record<string, number | undefined> = { act: previousAct.at, reserved: reserved?.at, settled: settled?.at, plan: checkpointOf(k, 'plan').at };
      const times = [...marks.map((mark) => at[mark.at]), act.at];
      if (times.some((time) => time === undefined)) throw new Error(`run ${runId}: step ${k} lacks one of its events (${marks.map((mark) => mark.at).join(', ')})`);
      for (let i = 0; i < marks.length; i++) parts[i]!.push(times[i + 1]! - times[i]!);
      const step = act.at - previousAct.at;
      steps.push(step);
      if (k - 2 < (stepsPerRun - 1) / 4) firstQuarter.push(step);
      if (stepsPerRun - k < (stepsPerRun - 1) / 4) lastQuarter.push(step);
      const turn = events.find((row) => row.type === 'run.model_turn' && row.iteration === k);
      if (turn?.duration_ms === null || turn?.duration_ms === undefined) throw new Error(`run ${runId}: model turn ${k} has no durationMs`);
      modelCalls.push(turn.duration_ms);
      lessModel.push(step - turn.duration_ms);
      const inStep = events.filter((row) => row.version > previousAct.version && row.version <= act.version);
      tx.runStream += new Set(inStep.map((row) => row.tx)).size;
      tx.withCheckpoint += new Set(inStep.filter((row) => row.type === 'run.checkpoint').map((row) => row.tx)).size;
      tx.budget += new Set([reserved?.tx, settled?.tx].filter((id) => id !== undefined)).size;
    }
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    pricing,
    runs: runIds.length,
    steps: steps.length,
    perStepMs: timing(steps),
    perStepLessModelMs: timing(lessModel),
    perCheckpointMs: timing(checkpoints),
    planCheckpointMs: timing(plans),
    actCheckpointMs: timing(acts),
    parts: marks.map((mark, i) => ({ kind: mark.part, ms: timing(parts[i]!) })),
    modelCallMs: timing(modelCalls),
    firstQuarterStepMs: mean(firstQuarter),
    lastQuarterStepMs: mean(lastQuarter),
    transactionsPerStep: { runStream: tx.runStream / steps.length, withCheckpoint: tx.withCheckpoint / steps.length, budget: tx.budget / steps.length },
  };
}

/** Sequential INSERTs in autocommit: each one statement and one synchronous commit. */
async function commitLoop(pool: Pool, count: number, payload: string): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  const started = now();
  for (let i = 0; i < count; i++) {
    const t0 = now();
    await pool.query({ name: 'bench_commit', text: 'INSERT INTO bench_commit (payload) VALUES ($1::jsonb)', values: [payload] });
    latencies.push(now() - t0);
  }
  return { latencies, seconds: (now() - started) / 1_000 };
}

/**
 * Runs of `stepsPerRun` scripted update_criteria steps, one run at a time on one app process,
 * free and priced, timed by their own event timestamps; against one INSERT + COMMIT of a row
 * of the same size into a plain table of the same database, measured before and after the runs.
 */
async function benchSteps(options: ExecutionOptions['steps']): Promise<StepResults> {
  const infra = await startInfrastructure();
  let app: AppProcess | null = null;
  let ends: RunEnds | null = null;
  try {
    return await withScriptsDir(async (scripts) => {
      app = await spawnApp(infra, 'the app', { PACKETAGENT_SCRIPTS_DIR: scripts });
      const owner = { baseUrl: app.baseUrl, ...(await firstRunSetup(app.baseUrl, infra.setupToken)) };
      const turns = [...Array.from({ length: options.stepsPerRun }, () => UPDATE_TURN), FINISH_TURN];
      const deployments = {} as Record<Pricing, string>;
      for (const pricing of ['free', 'priced'] as const) {
        writeScript(scripts, `bench-steps-${pricing}`, turns, pricing);
        deployments[pricing] = (await deploy(owner, `bench-steps-${pricing}`, 1))[0]!;
      }
      const watcher = (ends = new RunEnds(infra.bus.nc, infra.bus.prefix, owner.workspaceId));
      await watcher.ready();
      const oneRun = async (pricing: Pricing): Promise<string> => {
        const runId = await startRun(owner.baseUrl, owner, deployments[pricing]);
        const ended = await watcher.wait(runId);
        if (ended !== 'run.succeeded') throw new Error(`run ${runId} ended ${ended}, expected run.succeeded`);
        return runId;
      };
      const warmups: string[] = [];
      for (let i = 0; i < options.warmupRuns; i++) for (const pricing of ['free', 'priced'] as const) warmups.push(await oneRun(pricing));

      const { rows: settings } = await infra.db.pool.query<{ synchronous_commit: string; fsync: string }>(
        `SELECT current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`,
      );
      const database = { synchronousCommit: settings[0]!.synchronous_commit, fsync: settings[0]!.fsync };
      if (database.synchronousCommit !== 'on' || database.fsync !== 'on') {
        process.stdout.write(`warning: synchronous_commit is ${database.synchronousCommit} and fsync ${database.fsync}: commits are not flushed as in production\n`);
      }
      // The baseline row weighs what one checkpointed commit writes to the events table.
      const { rows: weight } = await infra.db.pool.query<{ bytes: number }>(
        `SELECT avg(bytes)::float8 AS bytes FROM (
           SELECT sum(pg_column_size(e.*)) AS bytes FROM events e WHERE stream_id = ANY($1)
            GROUP BY xmin::text HAVING bool_or(type = 'run.checkpoint')) commits`,
        [warmups.map(runStreamId)],
      );
      const checkpointCommitBytes = Math.round(weight[0]!.bytes);
      const payload = JSON.stringify({ pad: 'x'.repeat(Math.max(0, checkpointCommitBytes - 40)) });
      await infra.db.pool.query('CREATE TABLE bench_commit (id bigserial PRIMARY KEY, payload jsonb NOT NULL)');
      await commitLoop(infra.db.pool, Math.max(20, Math.round(options.commits / 10)), payload);

      // Baseline halves before and after the runs, so drift on the shared machine touches both.
      const half = Math.ceil(options.commits / 2);
      const walInspect = await enableWalInspect(infra.db.pool);
      // The app stays up during the baseline: its CPU shows, and it has nothing left to do.
      await settle(infra.db, [app]);
      let cpu = await cpuWithServersFrom(infra.db, app);
      const before = await commitLoop(infra.db.pool, half, payload);
      const beforeCpu = await cpu();
      const variants = {} as Record<Pricing, StepVariant>;
      for (const pricing of ['free', 'priced'] as const) {
        const runIds: string[] = [];
        await settle(infra.db, [app]);
        const walFrom = await walFlushed(infra.db.pool);
        cpu = await cpuWithServersFrom(infra.db, app);
        const started = now();
        for (let i = 0; i < options.runs; i++) runIds.push(await oneRun(pricing));
        const runsMs = now() - started;
        const use = await cpu();
        const turnsRun = options.runs * (options.stepsPerRun + 1);
        await settle(infra.db, [app]);
        const writes = walInspect ? per(await walWrites(infra.db.pool, walFrom, await walFlushed(infra.db.pool)), turnsRun) : null;
        const perTurn = (cores: number | null) => (cores === null ? null : (cores * runsMs) / turnsRun);
        variants[pricing] = {
          ...(await analyseSteps(infra.db, pricing, runIds, options.stepsPerRun)),
          writesPerTurn: writes,
          cpu: use,
          cpuMsPerTurn: { machine: perTurn(use.machine), app: perTurn(use.app), postgres: perTurn(use.postgres) },
        };
      }
      await settle(infra.db, [app]);
      cpu = await cpuWithServersFrom(infra.db, app);
      const after = await commitLoop(infra.db.pool, options.commits - half, payload);
      const afterCpu = await cpu();

      return {
        stepsPerRun: options.stepsPerRun,
        database,
        ...variants,
        checkpointCommitBytes,
        commitMs: timing([...before.latencies, ...after.latencies]),
        baselineCpu: combineCpu([
          { cpu: beforeCpu, seconds: before.seconds },
          { cpu: afterCpu, seconds: after.seconds },
        ]),
      };
    });
  } finally {
    (ends as RunEnds | null)?.close();
    await (app as AppProcess | null)?.stop();
    await infra.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. No-op runs per second on two supervisors against graphile-worker on two runners.

async function benchOursThroughput(options: ExecutionOptions['throughput']): Promise<ThroughputResults['ours']> {
  const infra = await startInfrastructure();
  const apps: AppProcess[] = [];
  let ends: RunEnds | null = null;
  try {
    return await withScriptsDir(async (scripts) => {
      for (const pricing of ['free', 'priced'] as const) writeScript(scripts, `bench-noop-${pricing}`, [FINISH_TURN], pricing);
      // One after the other: the first migrates the empty database.
      for (const name of ['app A', 'app B']) apps.push(await spawnApp(infra, name, { PACKETAGENT_SCRIPTS_DIR: scripts }));
      const setup = await firstRunSetup(apps[0]!.baseUrl, infra.setupToken);
      const owner = { baseUrl: apps[0]!.baseUrl, ...setup };
      // A deployment per client: admission serialises on a deployment's row, which is not what is measured here.
      const deployments = await deploy(owner, 'bench-noop-free', options.clients);
      const [pricedDeployment] = await deploy(owner, 'bench-noop-priced', 1);
      const watcher = (ends = new RunEnds(infra.bus.nc, infra.bus.prefix, owner.workspaceId));
      await watcher.ready();
      const runIds: string[] = [];
      // Starts alternate between the two processes; which supervisor drives a run is up to the bus.
      const op = async (k: number): Promise<number> => {
        const t0 = now();
        const runId = await startRun(apps[k % apps.length]!.baseUrl, owner, deployments[k % deployments.length]!);
        runIds.push(runId);
        const ended = await watcher.wait(runId);
        if (ended !== 'run.succeeded') throw new Error(`run ${runId} ended ${ended}, expected run.succeeded`);
        return now() - t0;
      };
      await closedLoop(options.clients, options.warmup, op);
      runIds.length = 0;

      // One at a time first, each pricing: the path of a run with nothing else going on.
      const oneAtATime: NoopBreakdown[] = [];
      for (const pricing of ['free', 'priced'] as const) {
        await settle(infra.db, apps);
        const alone: string[] = [];
        const admission: number[] = [];
        for (let k = 0; k < options.oneAtATime; k++) {
          const t0 = now();
          const runId = await startRun(apps[k % apps.length]!.baseUrl, owner, pricing === 'free' ? deployments[k % deployments.length]! : pricedDeployment!);
          admission.push(now() - t0);
          alone.push(runId);
          const ended = await watcher.wait(runId);
          if (ended !== 'run.succeeded') throw new Error(`run ${runId} ended ${ended}, expected run.succeeded`);
        }
        oneAtATime.push({ ...(await noopBreakdown(infra.db, pricing, alone)), admissionMs: timing(admission) });
      }

      const walInspect = await enableWalInspect(infra.db.pool);
      await settle(infra.db, apps);
      const walFrom = await walFlushed(infra.db.pool);
      const cpu = await cpuWithServersFrom(infra.db, apps);
      const firstStart = Date.now();
      const loop = await closedLoop(options.clients, options.runs, op);
      const cpuUse = await cpu();
      await settle(infra.db, apps);
      const writesPerRun = walInspect ? per(await walWrites(infra.db.pool, walFrom, await walFlushed(infra.db.pool)), options.runs) : null;

      const streams = runIds.map(runStreamId);
      const { rows } = await infra.db.pool.query<{ stream_id: string; admitted: number; terminal: number; replicas: string[] }>(
        `SELECT stream_id,
                extract(epoch FROM min(occurred_at) FILTER (WHERE type = 'run.admitted'))::float8 * 1000 AS admitted,
                extract(epoch FROM max(occurred_at) FILTER (WHERE type = ANY($2)))::float8 * 1000 AS terminal,
                array_agg(data->>'replica') FILTER (WHERE type = 'run.claimed') AS replicas
           FROM events WHERE stream_id = ANY($1) GROUP BY stream_id`,
        [streams, TERMINAL_TYPES],
      );
      if (rows.length !== runIds.length || rows.some((row) => row.terminal === null || row.admitted === null)) {
        throw new Error(`${runIds.length} runs were started but ${rows.filter((row) => row.terminal !== null).length} have a terminal event`);
      }
      const lastTerminal = Math.max(...rows.map((row) => row.terminal));
      const seconds = (lastTerminal - firstStart) / 1_000;
      const byReplica = new Map<string, number>();
      for (const row of rows) for (const replica of row.replicas ?? []) byReplica.set(replica, (byReplica.get(replica) ?? 0) + 1);
      return {
        kind: 'ours: POST runs -> run.succeeded, 2 app processes',
        clients: options.clients,
        count: runIds.length,
        seconds,
        perSecond: runIds.length / seconds,
        loopMs: summarise(loop.latencies),
        cpu: cpuUse,
        deployments: deployments.length,
        processes: apps.length,
        admittedToTerminalMs: summarise(rows.map((row) => row.terminal - row.admitted)),
        runsByReplica: [...byReplica.values()].sort((a, b) => b - a),
        oneAtATime,
        writesPerRun,
      };
    });
  } finally {
    (ends as RunEnds | null)?.close();
    for (const app of apps) await app.stop();
    await infra.cleanup();
  }
}

/** Where a no-op run is cut, in order: each mark is the first event of a commit. */
const NOOP_MARKS: Record<Pricing, { type: string; part: string }[]> = {
  free: [
    { type: 'run.admitted', part: 'run.admitted -> run.claimed (relay, JetStream delivery, wake, claim, reading the run and its definition)' },
    { type: 'run.claimed', part: 'run.claimed -> run.model_turn (start commit, wall-time timer, model call)' },
    { type: 'run.model_turn', part: 'run.model_turn -> run.succeeded (model turn commit, finish checked)' },
  ],
  priced: [
    { type: 'run.admitted', part: 'run.admitted -> run.claimed (relay, JetStream delivery, wake, claim, reading the run and its definition)' },
    { type: 'run.claimed', part: 'run.claimed -> budget.reserved (start commit, wall-time timer, reserve up to its append)' },
    { type: 'budget.reserved', part: 'budget.reserved -> budget.settled (reserve commit and reply, model call, settle up to its append)' },
    { type: 'budget.settled', part: 'budget.settled -> run.model_turn (settle commit and reply)' },
    { type: 'run.model_turn', part: 'run.model_turn -> run.succeeded (model turn commit, finish checked)' },
  ],
};

/** The events of no-op runs in the order they are written, and the gaps between them. */
async function noopBreakdown(db: TestDatabase, pricing: Pricing, runIds: string[]): Promise<Omit<NoopBreakdown, 'admissionMs'>> {
  const { rows: found } = await db.pool.query<{ stream_id: string; run_id: string | null; type: string; at: number }>(
    `SELECT stream_id, NULL AS run_id, type, extract(epoch FROM occurred_at)::float8 * 1000 AS at FROM events WHERE stream_id = ANY($1)
     UNION ALL
     SELECT stream_id, data->>'runId', type, extract(epoch FROM occurred_at)::float8 * 1000 FROM events WHERE type IN ('budget.reserved', 'budget.settled') AND data->>'runId' = ANY($2)`,
    [runIds.map(runStreamId), runIds],
  );
  const rows = found.map((row) => ({ ...row, run_id: row.run_id ?? runIdFromStream(row.stream_id) }));
  const marks = [...NOOP_MARKS[pricing].map((mark) => mark.type), 'run.succeeded'];
  const gaps = NOOP_MARKS[pricing].map(() => [] as number[]);
  const totals: number[] = [];
  for (const runId of runIds) {
    const at = marks.map((type) => rows.find((row) => row.run_id === runId && row.type === type)?.at);
    if (at.some((value) => value === undefined)) throw new Error(`run ${runId} lacks one of ${marks.join(', ')}`);
    for (let i = 0; i < gaps.length; i++) gaps[i]!.push(at[i + 1]! - at[i]!);
    totals.push(at[at.length - 1]! - at[0]!);
  }
  return { pricing, count: runIds.length, parts: NOOP_MARKS[pricing].map((mark, i) => ({ kind: mark.part, ms: timing(gaps[i]!) })), totalMs: timing(totals) };
}

function isNoopPayload(payload: unknown): payload is { id: string } {
  return typeof (payload as { id?: unknown } | null)?.id === 'string';
}

/** graphile-worker on its own fresh database on the same server: two runners, jobs that do nothing. */
async function benchGraphileThroughput(options: ExecutionOptions['throughput']): Promise<ThroughputResults['baseline']> {
  const db = await createTestDatabase({ empty: true });
  const concurrencyPerRunner = Math.ceil(options.clients / 2);
  const logger = new Logger(() => (level, message) => {
    if (String(level) === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
  });
  const waiters = new Map<string, () => void>();
  const done = new Set<string>();
  // Pools of our own, ended before the database is dropped (graphile-worker does not end pools it was given).
  const runnerPools = [0, 1].map(() => new Pool({ connectionString: db.url, max: concurrencyPerRunner + 2 }));
  const utilsPool = new Pool({ connectionString: db.url, max: options.clients });
  for (const pool of [...runnerPools, utilsPool]) {
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
  }
  const runners: Runner[] = [];
  let utils: Awaited<ReturnType<typeof makeWorkerUtils>> | null = null;
  try {
    for (const pgPool of runnerPools) {
      runners.push(
        await run({
          pgPool,
          concurrency: concurrencyPerRunner,
          noHandleSignals: true,
          pollInterval: 1_000,
          logger,
          taskList: {
            noop: async (payload) => {
              if (!isNoopPayload(payload)) throw new Error('unexpected payload');
              done.add(payload.id);
              waiters.get(payload.id)?.();
              waiters.delete(payload.id);
            },
          },
        }),
      );
    }
    const workerUtils = (utils = await makeWorkerUtils({ pgPool: utilsPool, logger }));
    const op = (tag: string) => async (k: number): Promise<number> => {
      const id = `${tag}-${k}`;
      const t0 = now();
      const finished = done.has(id) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(id, resolve));
      await workerUtils.addJob('noop', { id });
      await finished;
      return now() - t0;
    };
    const jobsLeft = async () => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM graphile_worker._private_jobs')).rows[0]!.n);
    await closedLoop(options.clients, options.warmup, op('warm'));
    await eventually(async () => (await jobsLeft()) === 0, { timeoutMs: 60_000, intervalMs: 5, what: 'the warm-up jobs to be completed' });

    const walInspect = await enableWalInspect(db.pool);
    const walFrom = await walFlushed(db.pool);
    const cpu = await cpuWithServersFrom(db, null);
    const firstStart = now();
    const loop = await closedLoop(options.clients, options.baselineJobs, op('job'));
    // A job is done for the queue when its row is gone: the completion committed.
    await eventually(async () => (await jobsLeft()) === 0, { timeoutMs: 60_000, intervalMs: 5, what: 'every job to be completed' });
    const seconds = (now() - firstStart) / 1_000;
    const cpuUse = await cpu();
    const writesPerJob = walInspect ? per(await walWrites(db.pool, walFrom, await walFlushed(db.pool)), options.baselineJobs) : null;
    return {
      kind: 'graphile-worker: addJob -> job completed, 2 runners',
      clients: options.clients,
      count: loop.latencies.length,
      seconds,
      perSecond: loop.latencies.length / seconds,
      loopMs: summarise(loop.latencies),
      cpu: cpuUse,
      runners: runners.length,
      concurrencyPerRunner,
      writesPerJob,
    };
  } finally {
    for (const runner of runners) await runner.stop().catch(() => undefined);
    await Promise.resolve(utils?.release()).catch(() => undefined);
    await Promise.all([...runnerPools, utilsPool].map((pool) => pool.end())).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// 3. From the claim to the first model call: the SQL statements and NATS messages on the way.

/**
 * No-op runs alone on one app process whose every Postgres connection goes through a proxy in
 * this process, with the bus prefix's command, JetStream and event subjects tapped. Between
 * runs the relay and the projector are let finish, so each run's windows hold its own work (and
 * whatever timer of the app fell into them).
 */
export async function benchClaimToModel(options: ExecutionOptions['claimToModel']): Promise<ClaimToModelResults> {
  const infra = await startInfrastructure();
  const proxy = await startPgProxy(infra.db.url);
  const tap = await startNatsTap(infra.bus.nc, infra.bus.prefix);
  let app: AppProcess | null = null;
  let ends: RunEnds | null = null;
  try {
    return await withScriptsDir(async (scripts) => {
      app = await spawnApp(infra, 'the app (behind a Postgres proxy)', { PACKETAGENT_SCRIPTS_DIR: scripts, PACKETAGENT_DATABASE_URL: proxy.url });
      const owner = { baseUrl: app.baseUrl, ...(await firstRunSetup(app.baseUrl, infra.setupToken)) };
      const seen = {} as Record<Pricing, string>;
      const fresh = {} as Record<Pricing, string[]>;
      for (const pricing of ['free', 'priced'] as const) {
        writeScript(scripts, `bench-hops-${pricing}`, [FINISH_TURN], pricing);
        const [first, ...rest] = await deploy(owner, `bench-hops-${pricing}`, 1 + options.newDeploymentRuns);
        seen[pricing] = first!;
        fresh[pricing] = rest;
      }
      const watcher = (ends = new RunEnds(infra.bus.nc, infra.bus.prefix, owner.workspaceId));
      await watcher.ready();
      const running = app as AppProcess;
      const oneRun = async (deploymentId: string): Promise<string> => {
        await settle(infra.db, [running]);
        const runId = await startRun(owner.baseUrl, owner, deploymentId);
        const ended = await watcher.wait(runId);
        if (ended !== 'run.succeeded') throw new Error(`run ${runId} ended ${ended}, expected run.succeeded`);
        return runId;
      };
      for (let i = 0; i < options.warmupRuns; i++) for (const pricing of ['free', 'priced'] as const) await oneRun(seen[pricing]);

      const measured: { pricing: Pricing; deployment: 'seen' | 'new'; runIds: string[] }[] = [];
      for (const pricing of ['free', 'priced'] as const) {
        const runIds: string[] = [];
        for (let i = 0; i < options.runs; i++) runIds.push(await oneRun(seen[pricing]));
        measured.push({ pricing, deployment: 'seen', runIds });
      }
      for (const pricing of ['free', 'priced'] as const) {
        const runIds: string[] = [];
        for (const deploymentId of fresh[pricing]) runIds.push(await oneRun(deploymentId));
        measured.push({ pricing, deployment: 'new', runIds });
      }
      await settle(infra.db, [running]);

      const allRuns = measured.flatMap((m) => m.runIds);
      const { rows } = await infra.db.pool.query<{ stream_id: string; duration_ms: number }>(
        `SELECT DISTINCT ON (stream_id) stream_id, (data->>'durationMs')::float8 AS duration_ms
           FROM events WHERE stream_id = ANY($1) AND type = 'run.model_turn' ORDER BY stream_id, stream_version`,
        [allRuns.map(runStreamId)],
      );
      const durationOf = new Map(rows.map((row) => [runIdFromStream(row.stream_id), row.duration_ms]));
      const statements = attribute(proxy.statements);
      const variants = measured.map(({ pricing, deployment, runIds }): ClaimToModelVariant => {
        const marks = runIds.map((runId) => {
          const durationMs = durationOf.get(runId);
          if (durationMs === undefined) throw new Error(`run ${runId} has no run.model_turn`);
          return runMarks(runId, pricing === 'priced', durationMs, statements, tap.messages, tap);
        });
        return {
          pricing,
          deployment,
          runs: runIds.length,
          fromClaim: countWindow(marks, (run) => run.claimAt, statements, tap.messages, tap),
          fromWake: countWindow(marks, (run) => run.wakeAt, statements, tap.messages, tap),
          marks,
        };
      });
      return { variants, statementsSeen: proxy.statements.length, messagesSeen: tap.messages.length };
    });
  } finally {
    (ends as RunEnds | null)?.close();
    await (app as AppProcess | null)?.stop();
    tap.close();
    await proxy.close();
    await infra.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * Run execution by the compiled app's supervisors with the scripted provider: what a
 * checkpointed step costs beside one commit, how many no-op runs two supervisor processes finish
 * per second beside graphile-worker's no-op jobs, which SQL statements and NATS requests a no-op
 * run makes from its claim to its first model call, and how long a run held by a SIGKILLed
 * process waits before the other process takes it over, beside the configured lease.
 */
export async function benchExecution(options: ExecutionOptions): Promise<ExecutionResults> {
  const steps = await benchSteps(options.steps);
  const ours = await benchOursThroughput(options.throughput);
  const baseline = await benchGraphileThroughput(options.throughput);
  const claimToModel = await benchClaimToModel(options.claimToModel);
  const recovery: RecoveryResults[] = [];
  for (const setting of options.recovery.settings) recovery.push(await benchRecovery(setting, options.recovery.repeats));
  return { steps, throughput: { ours, baseline }, claimToModel, recovery };
}
