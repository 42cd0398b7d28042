import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { CommandBus, topology } from '@packetagent/bus';
import { BudgetCommands, MICRO_USD_PER_USD, type ReserveResult } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { cpuFrom, expectStatus, relayIdle, request, ROOT, startApp, type App, type CpuUse } from './app-process';
import { now, summarise, type Summary } from './stats';

/** The schema's ceiling (MAX_BUDGET_USD), so no limit is reached however long the benchmark runs. */
const LIMIT_USD = 100_000;
/** A model turn's worth: held before the call, settled at a little less after it. */
const RESERVE_MICROS = MICRO_USD_PER_USD / 20;
const SETTLE_MICROS = (RESERVE_MICROS * 9) / 10;
const actor = { kind: 'service', id: 'bench' } as const;

export interface BudgetOptions {
  /** Closed-loop clients, and connections of the baseline's pool. */
  clients: number;
  /** Reservations per client and case, each settled right after. */
  reservationsPerClient: number;
  /** Bare UPDATEs per client in the baseline, which is much faster. */
  updatesPerClient: number;
  /** Reservations per client before measuring (JIT, connections, plans). */
  warmupPerClient: number;
}

export interface BudgetCaseResult {
  kind: string;
  clients: number;
  /** Distinct runs and deployments reserved against; null for the baseline. */
  runs: number | null;
  deployments: number | null;
  count: number;
  /** Reservations (or UPDATEs) per second, each reservation followed by its settlement. */
  perSecond: number;
  /** The reserve request/reply alone (or the UPDATE alone). */
  reserveMs: Summary;
  settleMs: Summary | null;
  cpu: CpuUse;
}

export interface BudgetResults {
  reserveMicroUsd: number;
  settleMicroUsd: number;
  /** One client on one run: the path length of a reservation without contention. */
  single: BudgetCaseResult;
  hot: BudgetCaseResult;
  spread: BudgetCaseResult;
  /** A bare NATS request/reply between this process and an echo responder, one at a time. */
  natsEchoMs: Summary;
  baseline: BudgetCaseResult;
  verified: { reservations: number; settled: number; reservedEvents: number; settledEvents: number };
}

/** `clients` loops of `perClient` operations each; `op` returns its own latencies. */
async function eachClient(
  clients: number,
  perClient: number,
  op: (client: number, i: number) => Promise<{ first: number; second: number | null }>,
): Promise<{ first: number[]; second: number[]; seconds: number }> {
  const first: number[] = [];
  const second: number[] = [];
  const started = now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let i = 0; i < perClient; i++) {
        const sample = await op(client, i);
        first.push(sample.first);
        if (sample.second !== null) second.push(sample.second);
      }
    }),
  );
  return { first, second, seconds: (now() - started) / 1_000 };
}

/**
 * Budget reservations through the compiled app (NATS request/reply from here to the budget
 * service, its transaction locking the run, deployment and workspace scope rows, the
 * `budget.reserved` append), with every client on one run and with a run and deployment per
 * client, beside a bare conditional UPDATE of one balance row on the same Postgres.
 */
export async function benchBudget(options: BudgetOptions): Promise<BudgetResults> {
  const app = await startApp();
  try {
    const { workspaceId, apiKey } = app.setup;
    const auth = { authorization: `Bearer ${apiKey}` };
    const api = (path: string) => `${app.baseUrl}/api/v1/workspaces/${workspaceId}${path}`;
    const worker = await request<{ id: string }>(api('/workers'), 'POST', { body: { name: 'release-audit' }, headers: auth });
    expectStatus(worker, 201, 'creating the worker');
    const example = readFileSync(join(ROOT, 'examples/release-audit.worker.yaml'), 'utf8');
    // USD limits on all three kinds of scope, and no action counts, so a reservation locks one row of each kind.
    const definition = example.replace(
      /^budgets:\n(?:[ ]{2}.*\n)+/m,
      `budgets: { perRunUsd: ${LIMIT_USD}, perDeploymentDailyUsd: ${LIMIT_USD}, perWorkspaceDailyUsd: ${LIMIT_USD} }\n`,
    );
    if (definition === example) throw new Error('examples/release-audit.worker.yaml has no `budgets:` block to replace');
    const version = await request(api(`/workers/${worker.body.id}/versions`), 'POST', { raw: definition, headers: { ...auth, 'content-type': 'application/yaml' } });
    expectStatus(version, 201, 'applying the worker version');

    const startRun = async (): Promise<{ deploymentId: string; runId: string }> => {
      const deployed = await request<{ id: string }>(api('/deployments'), 'POST', { body: { workerId: worker.body.id, acceptMissing: true }, headers: auth });
      expectStatus(deployed, 201, 'deploying');
      const started = await request<{ runId: string; hold: string | null }>(api(`/deployments/${deployed.body.id}/runs`), 'POST', {
        body: { input: { release: '2026.11.3' }, idempotencyKey: randomBytes(12).toString('hex') },
        headers: auth,
      });
      expectStatus(started, 201, 'starting a run');
      // A held run was not admitted, and the budget service learns only admitted runs.
      if (started.body.hold !== null) throw new Error(`the run was held (${started.body.hold}) instead of admitted`);
      return { deploymentId: deployed.body.id, runId: started.body.runId };
    };
    const hot = await startRun();
    const spread: string[] = [];
    for (let c = 0; c < options.clients; c++) spread.push((await startRun()).runId);

    const bus = new CommandBus(app.bus.nc, topology(app.bus.prefix));
    const reserve = (runId: string, key: string): Promise<ReserveResult> =>
      bus.request(BudgetCommands.reserve, { workspaceId, runId, amounts: [{ unit: 'usd', amount: RESERVE_MICROS }], ttlSeconds: 3_600, idempotencyKey: key, actor });
    const settle = async (reservationId: string): Promise<void> =>
      void (await bus.request(BudgetCommands.settle, { workspaceId, reservationId, actual: [{ unit: 'usd', amount: SETTLE_MICROS }], actor }));

    // The budget service learns runs and limits from the deployments' and runs' events through
    // the relay: until then a reservation answers budget_run_not_found or budget_limits_not_found.
    let reservations = 0;
    for (const runId of [hot.runId, ...spread]) {
      const held = await eventually(
        async () => {
          const result = await reserve(runId, `ready-${runId}`);
          return result.state === 'held' && result;
        },
        { timeoutMs: 60_000, intervalMs: 50, what: `the budget service to know run ${runId}` },
      );
      await settle(held.reservationId);
      reservations++;
    }

    const ledger = async (tag: string, runOf: (client: number) => string, perClient: number, clients = options.clients) => {
      const loop = await eachClient(clients, perClient, async (client, i) => {
        const t0 = now();
        const result = await reserve(runOf(client), `${tag}-${client}-${i}`);
        const t1 = now();
        if (result.state === 'refused') throw new Error(`a benchmark reservation was refused (${result.reason} on ${result.scope.kind} ${result.scope.id})`);
        await settle(result.reservationId);
        return { first: t1 - t0, second: now() - t1 };
      });
      reservations += loop.first.length;
      return loop;
    };
    const ledgerCase = async (kind: string, tag: string, runOf: (client: number) => string, runs: number, clients = options.clients): Promise<BudgetCaseResult> => {
      await relayIdle(app);
      await app.db.pool.query('CHECKPOINT').catch(() => undefined);
      const cpu = await cpuFrom(app);
      const loop = await ledger(tag, runOf, options.reservationsPerClient, clients);
      return {
        kind,
        clients,
        runs,
        deployments: runs,
        count: loop.first.length,
        perSecond: loop.first.length / loop.seconds,
        reserveMs: summarise(loop.first),
        settleMs: summarise(loop.second),
        cpu: await cpu(),
      };
    };

    await ledger('warm-hot', () => hot.runId, options.warmupPerClient);
    await ledger('warm-spread', (client) => spread[client]!, options.warmupPerClient);
    const single = await ledgerCase('reserve + settle, one client', 'single', () => hot.runId, 1, 1);
    const hotResult = await ledgerCase('reserve + settle, one hot run', 'hot', () => hot.runId, 1);
    const spreadResult = await ledgerCase('reserve + settle, a run and deployment per client', 'spread', (client) => spread[client]!, options.clients);
    await relayIdle(app);
    const subject = `${app.bus.prefix}.bench.echo`;
    const echo = app.bus.nc.subscribe(subject, { callback: (_error, message) => void message.respond(message.data) });
    const payload = JSON.stringify({ workspaceId, runId: hot.runId, amounts: [{ unit: 'usd', amount: RESERVE_MICROS }], ttlSeconds: 3_600, idempotencyKey: 'x'.repeat(40), actor });
    const echoes = await eachClient(1, options.reservationsPerClient, async () => {
      const t0 = now();
      await app.bus.nc.request(subject, payload, { timeout: 5_000 });
      return { first: now() - t0, second: null };
    });
    echo.unsubscribe();
    const baseline = await bareUpdate(app, options);

    // Every reservation made here must be held once and settled, with its two events.
    const { rows } = await app.db.pool.query<{ reservations: number; settled: number; reserved_events: number; settled_events: number }>(
      `SELECT (SELECT count(*) FROM budget.reservations)::int AS reservations,
              (SELECT count(*) FROM budget.reservations WHERE state = 'settled')::int AS settled,
              (SELECT count(*) FROM events WHERE type = 'budget.reserved')::int AS reserved_events,
              (SELECT count(*) FROM events WHERE type = 'budget.settled')::int AS settled_events`,
    );
    const verified = { reservations: rows[0]!.reservations, settled: rows[0]!.settled, reservedEvents: rows[0]!.reserved_events, settledEvents: rows[0]!.settled_events };
    if (Object.values(verified).some((count) => count !== reservations)) {
      throw new Error(`${reservations} reservations were made and settled, but the ledger shows ${JSON.stringify(verified)}`);
    }
    return { reserveMicroUsd: RESERVE_MICROS, settleMicroUsd: SETTLE_MICROS, single, hot: hotResult, spread: spreadResult, natsEchoMs: summarise(echoes.first), baseline, verified };
  } finally {
    await app.stop();
  }
}

/** The physical floor of a contended balance: one conditional UPDATE of one row, in autocommit. */
async function bareUpdate(app: App, options: BudgetOptions): Promise<BudgetCaseResult> {
  const pool = new Pool({ connectionString: app.db.url, max: options.clients });
  try {
    await pool.query(`CREATE TABLE bench_balance (id integer PRIMARY KEY, amount bigint NOT NULL)`);
    await pool.query(`INSERT INTO bench_balance (id, amount) VALUES (1, $1)`, [Number.MAX_SAFE_INTEGER]);
    const update = async (): Promise<{ first: number; second: null }> => {
      const t0 = now();
      const { rowCount } = await pool.query(`UPDATE bench_balance SET amount = amount - $1 WHERE id = 1 AND amount >= $1`, [RESERVE_MICROS]);
      const first = now() - t0;
      if (rowCount !== 1) throw new Error('the benchmark balance ran out');
      return { first, second: null };
    };
    await eachClient(options.clients, options.warmupPerClient * 5, update);
    await app.db.pool.query('CHECKPOINT').catch(() => undefined);
    const cpu = await cpuFrom(null);
    const loop = await eachClient(options.clients, options.updatesPerClient, update);
    return {
      kind: 'bare UPDATE of one row (baseline)',
      clients: options.clients,
      runs: null,
      deployments: null,
      count: loop.first.length,
      perSecond: loop.first.length / loop.seconds,
      reserveMs: summarise(loop.first),
      settleMs: null,
      cpu: await cpu(),
    };
  } finally {
    await pool.end();
  }
}
