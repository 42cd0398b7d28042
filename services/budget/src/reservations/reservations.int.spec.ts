import { CommandBus, RemoteCommandError, topology, type Topology } from '@packetagent/bus';
import {
  BudgetCommands,
  budgetReservationStream,
  type BudgetEventData,
  type BudgetScope,
  type EventRegistry,
  type ReserveResult,
} from '@packetagent/contracts';
import { OutboxRelay, PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from '@packetagent/testing';
import { budgetTestRegistry, deployWithRuns, runKnown, startBudgetReplica, type BudgetReplica } from '../testing/budget.testkit';

const operator = { kind: 'user', id: 'operator-1' } as const;
const keyOf = (scope: BudgetScope) => `${scope.kind}/${scope.id}/${scope.unit}/${scope.window}`;
let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

describe('budget reservations', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let relay: OutboxRelay;
  let sut: CommandBus;
  let replicas: BudgetReplica[];

  async function budgetEvents(workspaceId: string): Promise<{ type: string; stream: string; data: unknown }[]> {
    const { rows } = await db.pool.query<{ type: string; stream_id: string; data: unknown }>(
      `SELECT type, stream_id, data FROM events WHERE workspace_id = $1 AND type LIKE 'budget.%' ORDER BY global_position`,
      [workspaceId],
    );
    return rows.map((row) => ({ type: row.type, stream: row.stream_id, data: row.data }));
  }

  /** spent + held per scope, rebuilt from the events alone. */
  function ledgerFromEvents(events: { type: string; data: unknown }[]): Map<string, number> {
    const totals = new Map<string, number>();
    const add = (scope: BudgetScope, delta: number) => totals.set(keyOf(scope), (totals.get(keyOf(scope)) ?? 0) + delta);
    for (const event of events) {
      if (event.type === 'budget.reserved') for (const scope of (event.data as BudgetEventData<'budget.reserved'>).scopes) add(scope, scope.amount);
      if (event.type === 'budget.released' || event.type === 'budget.expired') {
        for (const scope of (event.data as BudgetEventData<'budget.released'>).scopes) add(scope, -scope.amount);
      }
      if (event.type === 'budget.settled') for (const scope of (event.data as BudgetEventData<'budget.settled'>).scopes) add(scope, scope.spent - scope.held);
    }
    return totals;
  }

  async function newRuns(budgets: Record<string, unknown>, runCount = 1) {
    const workspaceId = unique('ws_');
    const deploymentId = unique('dep-');
    const runIds = Array.from({ length: runCount }, (_, i) => `${deploymentId}-run-${i}`);
    await deployWithRuns(store, { workspaceId, deploymentId, budgets, runIds });
    await eventually(async () => (await Promise.all(runIds.map((runId) => runKnown(db.pool, runId)))).every(Boolean), { what: 'runs projected' });
    return { workspaceId, deploymentId, runIds };
  }

  const reserve = (workspaceId: string, runId: string, usd: number, extra: { idempotencyKey?: string; ttlSeconds?: number } = {}) =>
    sut.request(
      BudgetCommands.reserve,
      { workspaceId, runId, amounts: [{ unit: 'usd', amount: usd }], ttlSeconds: extra.ttlSeconds ?? 600, idempotencyKey: extra.idempotencyKey ?? unique('k-') },
      { timeoutMs: 60_000 },
    );

  const held = (result: ReserveResult) => {
    if (result.state === 'refused') throw new Error(`expected a hold, got ${JSON.stringify(result)}`);
    return result;
  };

  beforeAll(async () => {
    db = await createTestDatabase({ max: 6 });
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = budgetTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 50, leaderRetryMs: 100 });
    await relay.start();
    replicas = await Promise.all(['a', 'b', 'c', 'd'].map((name) => startBudgetReplica({ db, topo, registry }, `budget-${name}`, { sweepIntervalMs: 50 })));
    sut = new CommandBus(bus.nc, topo);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await relay.stop();
    await bus.cleanup();
    await db.drop();
  });

  it('never lets spent + held exceed any limit when 1,000 reservations race across 4 replicas', async () => {
    const { workspaceId, deploymentId, runIds } = await newRuns({ perRunUsd: 0.15, perDeploymentDailyUsd: 1, perWorkspaceDailyUsd: 2 }, 10);
    const outcomes = await Promise.all(
      Array.from({ length: 1_000 }, async (_, i) => {
        const result = await reserve(workspaceId, runIds[i % runIds.length]!, 7_000);
        if (result.state === 'refused') return result;
        // Some holds move on while others are still being decided, so freed room is reused.
        // A thousand commands at once queue behind each other: the wait is for the answer, not a latency bound.
        if (i % 3 === 0) await sut.request(BudgetCommands.release, { workspaceId, reservationId: result.reservationId }, { timeoutMs: 60_000 });
        if (i % 3 === 1) await sut.request(BudgetCommands.settle, { workspaceId, reservationId: result.reservationId, actual: [{ unit: 'usd', amount: 5_000 }] }, { timeoutMs: 60_000 });
        return result;
      }),
    );

    const holds = outcomes.filter((outcome) => outcome.state !== 'refused');
    const refusals = outcomes.flatMap((outcome) => (outcome.state === 'refused' ? [outcome] : []));
    expect(holds.length + refusals.length).toBe(1_000);
    expect(holds.length).toBeGreaterThan(0);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal.reason).toBe('budget_exhausted');
      expect(refusal.spent + refusal.held + refusal.requested).toBeGreaterThan(refusal.limit);
    }
    const refusedScopes = new Set(refusals.map((refusal) => refusal.scope.kind));
    expect(refusedScopes.has('deployment') || refusedScopes.has('run')).toBe(true);

    const events = await budgetEvents(workspaceId);
    expect(events.filter((event) => event.type === 'budget.reserved')).toHaveLength(holds.length);
    const ledger = ledgerFromEvents(events);
    const limits = new Map<string, number>([
      ...runIds.map((runId): [string, number] => [`run/${runId}/usd/run`, 150_000]),
      [`deployment/${deploymentId}/usd/day`, 1_000_000],
      [`workspace/${workspaceId}/usd/day`, 2_000_000],
    ]);
    expect([...ledger.keys()].sort()).toEqual([...limits.keys()].sort());
    for (const [scope, total] of ledger) expect({ scope, withinLimit: total <= limits.get(scope)! }).toEqual({ scope, withinLimit: true });

    // The ledger the service answers with agrees with the events.
    const usage = await sut.request(BudgetCommands.usage, { workspaceId });
    for (const scope of usage.scopes) expect({ scope: keyOf(scope), total: scope.spent + scope.held }).toEqual({ scope: keyOf(scope), total: ledger.get(keyOf(scope)) });
  });

  it('holds nothing in any scope when one unit of the request has no room', async () => {
    const { workspaceId, runIds } = await newRuns({ perRunUsd: 1, actions: { slack_post: { perRun: 2 } } });
    const result = await sut.request(BudgetCommands.reserve, {
      workspaceId, runId: runIds[0]!, ttlSeconds: 60, idempotencyKey: 'both',
      amounts: [{ unit: 'usd', amount: 10_000 }, { unit: 'count:slack_post', amount: 3 }],
    });

    expect(result).toEqual({
      state: 'refused', reason: 'budget_exhausted', scope: { kind: 'run', id: runIds[0], unit: 'count:slack_post', window: 'run' },
      limit: 2, spent: 0, held: 0, requested: 3,
    });
    const usage = await sut.request(BudgetCommands.usage, { workspaceId });
    expect(usage.scopes.map((scope) => [scope.unit, scope.held])).toEqual(expect.arrayContaining([['usd', 0], ['count:slack_post', 0]]));
    expect(await budgetEvents(workspaceId)).toEqual([]);
  });

  it('expires a hold past its TTL exactly once while every replica sweeps, and refuses to settle it', async () => {
    const { workspaceId, runIds } = await newRuns({ perRunUsd: 1 });
    const reservations = await Promise.all(Array.from({ length: 20 }, () => reserve(workspaceId, runIds[0]!, 1_000, { ttlSeconds: 1 }).then(held)));

    await eventually(
      async () => {
        const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM budget.reservations WHERE workspace_id = $1 AND state = 'expired'`, [workspaceId]);
        return Number(rows[0]!.n) === 20;
      },
      { what: 'every reservation expired', timeoutMs: 15_000 },
    );

    for (const reservation of reservations) {
      const types = (await store.readStream(budgetReservationStream(reservation.reservationId))).map((event) => event.type);
      expect(types).toEqual(['budget.reserved', 'budget.expired']);
    }
    const settle = await sut
      .request(BudgetCommands.settle, { workspaceId, reservationId: reservations[0]!.reservationId, actual: [{ unit: 'usd', amount: 1_000 }] })
      .catch((error: unknown) => error);
    expect(settle).toBeInstanceOf(RemoteCommandError);
    expect(settle).toMatchObject({ code: 'reservation_state_conflict' });
    await expect(sut.request(BudgetCommands.release, { workspaceId, reservationId: reservations[1]!.reservationId })).resolves.toMatchObject({
      state: 'expired', outcome: 'unchanged',
    });
    const usage = await sut.request(BudgetCommands.usage, { workspaceId });
    expect(usage.scopes).toEqual([expect.objectContaining({ spent: 0, held: 0 })]);
  });

  it('blocks the scopes an overspend touched until an operator reviews them', async () => {
    const { workspaceId, deploymentId, runIds } = await newRuns({ perRunUsd: 1, perDeploymentDailyUsd: 10 });
    const first = held(await reserve(workspaceId, runIds[0]!, 100_000));

    const settled = await sut.request(BudgetCommands.settle, { workspaceId, reservationId: first.reservationId, actual: [{ unit: 'usd', amount: 150_000 }] });
    expect(settled).toEqual({
      reservationId: first.reservationId, state: 'settled', overspent: true,
      blockedScopes: expect.arrayContaining([
        { kind: 'run', id: runIds[0], unit: 'usd', window: 'run' },
        { kind: 'deployment', id: deploymentId, unit: 'usd', window: 'day' },
      ]),
    });
    const types = (await store.readStream(budgetReservationStream(first.reservationId))).map((event) => event.type);
    expect(types).toEqual(['budget.reserved', 'budget.settled', 'budget.overspent']);

    const blocked = await reserve(workspaceId, runIds[0]!, 1);
    expect(blocked).toMatchObject({ state: 'refused', reason: 'scope_blocked', spent: 150_000, held: 0, requested: 1 });

    const runScope = { kind: 'run', id: runIds[0]!, unit: 'usd', window: 'run' } as const;
    const deploymentScope = { kind: 'deployment', id: deploymentId, unit: 'usd', window: 'day' } as const;
    await expect(sut.request(BudgetCommands.review, { workspaceId, scope: runScope, actor: operator })).resolves.toEqual({ scope: runScope, outcome: 'reviewed' });
    expect(await reserve(workspaceId, runIds[0]!, 1)).toMatchObject({ state: 'refused', reason: 'scope_blocked', scope: deploymentScope });
    await sut.request(BudgetCommands.review, { workspaceId, scope: deploymentScope, note: 'provider price changed', actor: operator });
    await expect(sut.request(BudgetCommands.review, { workspaceId, scope: deploymentScope, actor: operator })).resolves.toMatchObject({ outcome: 'unchanged' });

    expect(await reserve(workspaceId, runIds[0]!, 1)).toMatchObject({ state: 'held' });
    expect((await budgetEvents(workspaceId)).filter((event) => event.type === 'budget.reviewed')).toHaveLength(2);
  });

  it('answers the same reservation for a repeated idempotency key, even when repeats race', async () => {
    const { workspaceId, runIds } = await newRuns({ perRunUsd: 1 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => reserve(workspaceId, runIds[0]!, 2_000, { idempotencyKey: 'step-7' }).then(held)));

    expect(new Set(answers.map((answer) => answer.reservationId)).size).toBe(1);
    expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1);
    expect((await budgetEvents(workspaceId)).filter((event) => event.type === 'budget.reserved')).toHaveLength(1);
    const usage = await sut.request(BudgetCommands.usage, { workspaceId });
    expect(usage.scopes[0]).toMatchObject({ held: 2_000 });

    const otherAmount = await reserve(workspaceId, runIds[0]!, 3_000, { idempotencyKey: 'step-7' }).catch((error: unknown) => error);
    expect(otherAmount).toMatchObject({ code: 'budget_idempotency_conflict' });
  });

  it('announces the 80% warning once per scope and window', async () => {
    const { workspaceId, runIds } = await newRuns({ perRunUsd: 1 });
    const a = held(await reserve(workspaceId, runIds[0]!, 450_000));
    held(await reserve(workspaceId, runIds[0]!, 300_000));
    expect((await budgetEvents(workspaceId)).filter((event) => event.type === 'budget.warning')).toEqual([]);

    held(await reserve(workspaceId, runIds[0]!, 100_000));
    await sut.request(BudgetCommands.release, { workspaceId, reservationId: a.reservationId });
    held(await reserve(workspaceId, runIds[0]!, 400_000));

    const warnings = (await budgetEvents(workspaceId)).filter((event) => event.type === 'budget.warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.data).toMatchObject({
      scope: { kind: 'run', id: runIds[0], unit: 'usd', window: 'run' }, limit: 1_000_000, spent: 0, held: 850_000, thresholdPercent: 80,
    });
  });

  it('refuses to release a settled hold or settle a released one, so no hold is credited twice', async () => {
    const { workspaceId, runIds } = await newRuns({ perRunUsd: 1 });
    const settledOne = held(await reserve(workspaceId, runIds[0]!, 5_000));
    const releasedOne = held(await reserve(workspaceId, runIds[0]!, 5_000));
    await sut.request(BudgetCommands.settle, { workspaceId, reservationId: settledOne.reservationId, actual: [{ unit: 'usd', amount: 4_000 }] });
    await expect(sut.request(BudgetCommands.release, { workspaceId, reservationId: releasedOne.reservationId })).resolves.toMatchObject({ outcome: 'released' });

    await expect(sut.request(BudgetCommands.release, { workspaceId, reservationId: settledOne.reservationId })).rejects.toMatchObject({ code: 'reservation_state_conflict' });
    await expect(
      sut.request(BudgetCommands.settle, { workspaceId, reservationId: releasedOne.reservationId, actual: [{ unit: 'usd', amount: 1 }] }),
    ).rejects.toMatchObject({ code: 'reservation_state_conflict' });
    await expect(sut.request(BudgetCommands.release, { workspaceId, reservationId: releasedOne.reservationId })).resolves.toMatchObject({ outcome: 'unchanged' });
    await expect(sut.request(BudgetCommands.release, { workspaceId: 'ws_other', reservationId: releasedOne.reservationId })).rejects.toMatchObject({
      code: 'reservation_not_found',
    });

    const usage = await sut.request(BudgetCommands.usage, { workspaceId });
    expect(usage.scopes).toEqual([expect.objectContaining({ limit: 1_000_000, spent: 4_000, held: 0, blockedAt: null })]);
  });

  it('refuses, retryably, a run it has not heard of', async () => {
    const error = await reserve('ws_nobody', 'run-unknown', 1).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'budget_run_not_found', retryable: true });
  });
});
