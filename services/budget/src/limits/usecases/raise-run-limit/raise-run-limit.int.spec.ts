import { CommandBus, RemoteCommandError, topology, type Topology } from '@packetagent/bus';
import { BudgetCommands, BudgetErrorCodes, type EventRegistry, type Role } from '@packetagent/contracts';
import { OutboxRelay, PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from '@packetagent/testing';
import { budgetTestRegistry, deployWithRuns, runKnown, startBudgetReplica, type BudgetReplica } from '../../../testing/budget.testkit';
import { RaiseRunLimit } from './raise-run-limit';

const approver = { kind: 'user', id: 'approver-1' } as const;
let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

describe(RaiseRunLimit.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let relay: OutboxRelay;
  let replicas: BudgetReplica[];
  let sut: CommandBus;

  beforeAll(async () => {
    db = await createTestDatabase({ max: 6 });
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = budgetTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 50, leaderRetryMs: 100 });
    await relay.start();
    replicas = await Promise.all(['a', 'b'].map((name) => startBudgetReplica({ db, topo, registry }, `budget-raise-${name}`)));
    sut = new CommandBus(bus.nc, topo);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await relay.stop();
    await bus.cleanup();
    await db.drop();
  });

  /** A run of a deployment with these budgets that has spent `spentUsd` micro-dollars. */
  async function runThatSpent(budgets: Record<string, unknown>, spent: number) {
    const workspaceId = unique('ws_');
    const deploymentId = unique('dep-');
    const runId = `${deploymentId}-run`;
    await deployWithRuns(store, { workspaceId, deploymentId, budgets, runIds: [runId] });
    await eventually(() => runKnown(db.pool, runId), { what: 'run projected' });
    const held = await sut.request(BudgetCommands.reserve, { workspaceId, runId, amounts: [{ unit: 'usd', amount: spent }], ttlSeconds: 600, idempotencyKey: unique('k-') });
    if (held.state === 'refused') throw new Error(`expected a hold, got ${JSON.stringify(held)}`);
    await sut.request(BudgetCommands.settle, { workspaceId, reservationId: held.reservationId, actual: [{ unit: 'usd', amount: spent }] });
    return { workspaceId, deploymentId, runId };
  }

  const raise = (run: { workspaceId: string; runId: string }, amount: number, attentionId: string, actorRole: Role | null = 'member') =>
    sut.request(BudgetCommands.raiseRunLimit, { workspaceId: run.workspaceId, runId: run.runId, amount, attentionId, actor: approver, actorRole });

  const reserve = (run: { workspaceId: string; runId: string }, amount: number) =>
    sut.request(BudgetCommands.reserve, { workspaceId: run.workspaceId, runId: run.runId, amounts: [{ unit: 'usd', amount }], ttlSeconds: 600, idempotencyKey: unique('k-') });

  async function raisedEvents(workspaceId: string) {
    const { rows } = await db.pool.query<{ stream_id: string; data: Record<string, unknown>; metadata: { actor?: unknown } }>(
      `SELECT stream_id, data, metadata FROM events WHERE workspace_id = $1 AND type = 'budget.run_limit_raised' ORDER BY global_position`,
      [workspaceId],
    );
    return rows;
  }

  it('raises the run limit by the amount approved, so a reservation the old limit refused now holds', async () => {
    const run = await runThatSpent({ perRunUsd: 0.5 }, 500_000);
    expect(await reserve(run, 100_000)).toMatchObject({ state: 'refused', scope: { kind: 'run' } });

    const answer = await raise(run, 500_000, unique('att-'));

    expect(answer).toMatchObject({ requested: 500_000, raised: 500_000, limitBefore: 500_000, limitAfter: 1_000_000, cappedBy: null, duplicate: false });
    expect(await reserve(run, 100_000)).toMatchObject({ state: 'held' });
    const events = await raisedEvents(run.workspaceId);
    expect(events).toHaveLength(1);
    expect(events[0]!.stream_id).toMatch(/^budget_scope-\d+$/);
    expect(events[0]!.data).toMatchObject({ runId: run.runId, raised: 500_000, limitAfter: 1_000_000, actorRole: 'member', scope: { kind: 'run', id: run.runId } });
    expect(events[0]!.metadata.actor).toMatchObject(approver);
  });

  it('raises once per attention: repeats, even racing ones, answer the first raise', async () => {
    const run = await runThatSpent({ perRunUsd: 0.5 }, 500_000);
    const attentionId = unique('att-');

    const answers = await Promise.all([raise(run, 200_000, attentionId), raise(run, 200_000, attentionId), raise(run, 200_000, attentionId)]);

    expect(answers.map((answer) => answer.limitAfter)).toEqual([700_000, 700_000, 700_000]);
    expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1);
    expect(await raisedEvents(run.workspaceId)).toHaveLength(1);
    const usage = await sut.request(BudgetCommands.usage, { workspaceId: run.workspaceId, kind: 'run' });
    expect(usage.scopes[0]).toMatchObject({ limit: 700_000 });
  });

  it('refuses another amount for an attention that already raised the limit', async () => {
    const run = await runThatSpent({ perRunUsd: 0.5 }, 500_000);
    const attentionId = unique('att-');
    await raise(run, 200_000, attentionId);

    const error = await raise(run, 300_000, attentionId).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(RemoteCommandError);
    expect((error as RemoteCommandError).code).toBe(BudgetErrorCodes.raiseConflict);
  });

  it('caps the raise at what the deployment has left when the approver lacks deployment-control', async () => {
    const run = await runThatSpent({ perRunUsd: 0.5, perDeploymentDailyUsd: 0.7 }, 500_000);

    const answer = await raise(run, 500_000, unique('att-'), 'member');

    expect(answer).toMatchObject({ requested: 500_000, raised: 200_000, limitAfter: 700_000, cappedBy: { kind: 'deployment', id: run.deploymentId, window: 'day' } });
  });

  it('treats an approval without a recorded role as lacking deployment-control', async () => {
    const run = await runThatSpent({ perRunUsd: 0.5, perWorkspaceDailyUsd: 0.6 }, 500_000);

    const answer = await raise(run, 500_000, unique('att-'), null);

    expect(answer).toMatchObject({ raised: 100_000, limitAfter: 600_000, cappedBy: { kind: 'workspace', id: run.workspaceId } });
  });

  it('raises past what the deployment has left when the approver holds deployment-control; the deployment still refuses past its own limit', async () => {
    const run = await runThatSpent({ perRunUsd: 0.5, perDeploymentDailyUsd: 0.7 }, 500_000);

    const answer = await raise(run, 500_000, unique('att-'), 'admin');

    expect(answer).toMatchObject({ raised: 500_000, limitAfter: 1_000_000, cappedBy: null });
    expect(await reserve(run, 300_000)).toMatchObject({ state: 'refused', scope: { kind: 'deployment' } });
    expect(await reserve(run, 200_000)).toMatchObject({ state: 'held' });
  });

  it('refuses a run that has no limit of its own', async () => {
    const run = await runThatSpent({ perDeploymentDailyUsd: 5 }, 100_000);

    const error = await raise(run, 500_000, unique('att-')).catch((caught: unknown) => caught);

    expect((error as RemoteCommandError).code).toBe(BudgetErrorCodes.scopeNotFound);
  });
});
