import { topology } from '@packetagent/bus';
import type { DecodedEvent, EventRegistry } from '@packetagent/contracts';
import { PostgresEventStore, type NewEvent } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from '@packetagent/testing';
import { budgetTestRegistry, startBudgetReplica, type BudgetReplica } from '../../../testing/budget.testkit';
import { ApplyLimitsEvent } from './apply-limits-event';

const actor = { kind: 'user', id: 'u1' } as const;
const digest = (n: number) => n.toString(16).padStart(64, '0');

describe(ApplyLimitsEvent.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let replica: BudgetReplica;
  let sut: ApplyLimitsEvent;

  async function append(stream: string, workspaceId: string, event: NewEvent): Promise<DecodedEvent> {
    const { events } = await store.append(stream, 'any', [event], { workspaceId });
    return registry.decode(events[0]!);
  }

  const created = (deploymentId: string, budgets: Record<string, unknown>): NewEvent => ({
    type: 'deployment.created',
    data: {
      deploymentId, workerId: 'w1', workerName: 'audit', version: 1, digest: digest(1), effectiveDigest: digest(1),
      overrides: {}, maxConcurrentRuns: 1, triggers: [], limits: { budgets, bounds: {}, tools: [] },
    },
    actor,
  });

  async function limits(workspaceId: string): Promise<string[]> {
    const { rows } = await db.pool.query<{ kind: string; owner_id: string; unit: string; win: string; limit_amount: string | null }>(
      `SELECT kind, owner_id, unit, win, limit_amount FROM budget.scopes WHERE workspace_id = $1 ORDER BY kind, owner_id, unit, win`,
      [workspaceId],
    );
    return rows.map((row) => `${row.kind}/${row.owner_id}/${row.unit}/${row.win}=${row.limit_amount ?? 'none'}`);
  }

  beforeAll(async () => {
    db = await createTestDatabase({ max: 4 });
    bus = await createTestBus();
    registry = budgetTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    replica = await startBudgetReplica({ db, topo: topology(bus.prefix), registry }, 'budget-limits', { sweeper: false });
    sut = replica.app.get(ApplyLimitsEvent);
  });

  afterAll(async () => {
    await replica.close();
    await bus.cleanup();
    await db.drop();
  });

  it('projects deployment limits once, however often an event is delivered', async () => {
    const event = await append('deployment-d1', 'ws1', created('d1', { perDeploymentDailyUsd: 5, perWorkspaceDailyUsd: 20, actions: { slack_post: { perDay: 3 } } }));

    await expect(sut.execute(event)).resolves.toBe('applied');
    await expect(sut.execute(event)).resolves.toBe('ignored');
    expect(await limits('ws1')).toEqual([
      'deployment/d1/count:slack_post/day=3',
      'deployment/d1/usd/day=5000000',
      'workspace/ws1/usd/day=20000000',
    ]);
  });

  it('follows a rollback, and gives the workspace the strictest limit of its live deployments', async () => {
    await sut.execute(await append('deployment-d2', 'ws2', created('d2', { perDeploymentHourlyUsd: 1, perWorkspaceDailyUsd: 10 })));
    await sut.execute(await append('deployment-d3', 'ws2', created('d3', { perWorkspaceDailyUsd: 4 })));
    expect(await limits('ws2')).toEqual(['deployment/d2/usd/hour=1000000', 'workspace/ws2/usd/day=4000000']);

    const rolledBack = await append('deployment-d2', 'ws2', {
      type: 'deployment.rolled_back',
      data: {
        fromVersion: 2, version: 1, digest: digest(1), effectiveDigest: digest(2), maxConcurrentRuns: 1, triggers: [],
        limits: { budgets: { perDeploymentDailyUsd: 2, perWorkspaceDailyUsd: 10 }, bounds: {}, tools: [] },
      },
      actor,
    });
    await sut.execute(rolledBack);
    await sut.execute(await append('deployment-d3', 'ws2', { type: 'deployment.revoked', data: { reason: 'retired' }, actor }));

    expect(await limits('ws2')).toEqual(['deployment/d2/usd/day=2000000', 'deployment/d2/usd/hour=none', 'workspace/ws2/usd/day=10000000']);
  });

  it('records which deployment digest an admitted run is pinned to, once', async () => {
    const admitted = await append('run-r1', 'ws1', {
      type: 'run.admitted',
      data: {
        deploymentId: 'd1', workerId: 'w1', workerName: 'audit', version: 1, digest: digest(1), effectiveDigest: digest(1), runId: 'r1',
        activation: { activationId: 'a1', source: 'manual', dedupeKey: 'manual:1', triggerId: null, receivedAt: new Date().toISOString(), input: null, inputRef: null, details: {} },
      },
      actor,
    });

    await expect(sut.execute(admitted)).resolves.toBe('applied');
    await expect(sut.execute(admitted)).resolves.toBe('ignored');
    const { rows } = await db.pool.query(`SELECT deployment_id, effective_digest FROM budget.runs WHERE run_id = 'r1'`);
    expect(rows).toEqual([{ deployment_id: 'd1', effective_digest: digest(1) }]);
  });
});
