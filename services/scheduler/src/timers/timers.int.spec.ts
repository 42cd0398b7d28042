import { CommandBus, RemoteCommandError, topology, type Topology } from '@packetagent/bus';
import { SchedulerCommands, timerStream, type EventRegistry } from '@packetagent/contracts';
import { OutboxRelay, PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from '@packetagent/testing';
import { schedulerTestRegistry, startReplica, type Replica } from '../testing/scheduler.testkit';
import { FireDueTimers } from './usecases/fire-due-timers/fire-due-timers';

const actor = { kind: 'service', id: 'policy' } as const;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('durable timers', () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let relay: OutboxRelay;
  let sut: CommandBus;
  let replicas: Replica[];

  const streamTypes = async (timerId: string) => (await store.readStream(timerStream(timerId))).map((event) => event.type);
  const stateOf = async (timerId: string) =>
    (await db.pool.query<{ state: string }>(`SELECT state FROM scheduler.timers WHERE timer_id = $1`, [timerId])).rows[0]?.state;

  beforeAll(async () => {
    db = await createTestDatabase({ max: 20 });
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = schedulerTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 50, leaderRetryMs: 100 });
    await relay.start();
    replicas = [await startReplica({ db, topo, registry }, 'a'), await startReplica({ db, topo, registry }, 'b')];
    sut = new CommandBus(bus.nc, topo);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await relay.stop();
    await bus.cleanup();
    await db.drop();
  });

  it('sets a timer idempotently, reschedules it while pending, and reads it back', async () => {
    const dueAt = inMs(3_600_000);
    const created = await sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'approval-1', purpose: 'approval_deadline', dueAt, payload: { attentionId: 'att-1' }, actor });
    expect(created).toEqual({
      timerId: 'approval-1', workspaceId: 'ws1', purpose: 'approval_deadline', dueAt, state: 'pending',
      payload: { attentionId: 'att-1' }, firedAt: null, version: 1, outcome: 'created',
    });
    const again = await sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'approval-1', purpose: 'approval_deadline', dueAt, payload: { attentionId: 'att-1' }, actor });
    expect(again).toMatchObject({ outcome: 'unchanged', version: 1 });

    const later = inMs(7_200_000);
    const moved = await sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'approval-1', purpose: 'approval_deadline', dueAt: later, payload: { attentionId: 'att-1' }, actor });
    expect(moved).toMatchObject({ outcome: 'rescheduled', dueAt: later, version: 2 });
    expect(await sut.request(SchedulerCommands.getTimer, { workspaceId: 'ws1', timerId: 'approval-1' })).toMatchObject({ dueAt: later, state: 'pending', version: 2 });
    expect(await streamTypes('approval-1')).toEqual(['timer.set', 'timer.set']);

    const elsewhere = await sut.request(SchedulerCommands.getTimer, { workspaceId: 'ws2', timerId: 'approval-1' }).catch((error: unknown) => error);
    expect(elsewhere).toBeInstanceOf(RemoteCommandError);
    expect(elsewhere).toMatchObject({ code: 'not_found' });
    const otherPurpose = await sut
      .request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'approval-1', purpose: 'run_wall_time', dueAt, actor })
      .catch((error: unknown) => error);
    expect(otherPurpose).toMatchObject({ code: 'timer_conflict' });
  });

  it('creates a timer once when replicas receive the same set at the same time', async () => {
    const dueAt = inMs(3_600_000);
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'concurrent-set', purpose: 'retry', dueAt, actor })),
    );
    expect(replies.filter((reply) => reply.outcome === 'created')).toHaveLength(1);
    expect(replies.filter((reply) => reply.outcome === 'unchanged')).toHaveLength(5);
    expect(await streamTypes('concurrent-set')).toEqual(['timer.set']);
  });

  it('fires each due timer exactly once with two replicas, and appends timer.fired with its payload', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `wall-${index}`);
    await Promise.all(
      ids.map((timerId, index) =>
        sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId, purpose: 'run_wall_time', dueAt: inMs(200 + index * 20), payload: { runId: timerId }, actor }),
      ),
    );
    await eventually(async () => {
      const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM scheduler.timers WHERE timer_id LIKE 'wall-%' AND state = 'fired'`);
      return Number(rows[0]!.n) === ids.length;
    }, { what: 'every timer fired' });

    for (const timerId of ids) expect(await streamTypes(timerId)).toEqual(['timer.set', 'timer.fired']);
    const fired = (await store.readStream(timerStream('wall-3')))[1]!;
    expect(fired).toMatchObject({ actor: { kind: 'service', id: 'scheduler' }, data: { timerId: 'wall-3', purpose: 'run_wall_time', payload: { runId: 'wall-3' } } });
    const data = fired.data as { dueAt: string; firedAt: string };
    expect(Date.parse(data.firedAt)).toBeGreaterThanOrEqual(Date.parse(data.dueAt));
    const view = await sut.request(SchedulerCommands.getTimer, { workspaceId: 'ws1', timerId: 'wall-3' });
    expect(view).toMatchObject({ state: 'fired', firedAt: data.firedAt, version: 2 });
    const totals = replicas.map((replica) => replica.engine.status().timersFiredTotal);
    expect(totals.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(ids.length);

    const reset = await sut
      .request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'wall-3', purpose: 'run_wall_time', dueAt: inMs(60_000), payload: { runId: 'wall-3' }, actor })
      .catch((error: unknown) => error);
    expect(reset).toMatchObject({ code: 'timer_not_pending' });
  });

  it('never fires a cancelled timer', async () => {
    await sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'cancelled-1', purpose: 'approval_deadline', dueAt: inMs(400), actor });
    await sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'witness-1', purpose: 'approval_deadline', dueAt: inMs(600), actor });
    const cancelled = await sut.request(SchedulerCommands.cancelTimer, { workspaceId: 'ws1', timerId: 'cancelled-1', reason: 'approved', actor });
    expect(cancelled).toMatchObject({ outcome: 'cancelled', state: 'cancelled', version: 2 });

    await eventually(async () => (await stateOf('witness-1')) === 'fired', { what: 'the later timer to fire' });
    expect(await stateOf('cancelled-1')).toBe('cancelled');
    expect(await streamTypes('cancelled-1')).toEqual(['timer.set', 'timer.cancelled']);
    expect(await sut.request(SchedulerCommands.cancelTimer, { workspaceId: 'ws1', timerId: 'cancelled-1', actor })).toMatchObject({ outcome: 'unchanged', state: 'cancelled' });
    const missing = await sut.request(SchedulerCommands.cancelTimer, { workspaceId: 'ws1', timerId: 'never-set', actor }).catch((error: unknown) => error);
    expect(missing).toMatchObject({ code: 'not_found' });
  });

  it('ends a timer cancelled while it falls due either fired or cancelled, never both', async () => {
    const ids = Array.from({ length: 10 }, (_, index) => `racing-${index}`);
    await Promise.all(ids.map((timerId) => sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId, purpose: 'retry', dueAt: inMs(0), actor })));
    const replies = await Promise.all(ids.map((timerId) => sut.request(SchedulerCommands.cancelTimer, { workspaceId: 'ws1', timerId, actor })));
    await eventually(async () => {
      const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM scheduler.timers WHERE timer_id LIKE 'racing-%' AND state = 'pending'`);
      return Number(rows[0]!.n) === 0;
    }, { what: 'no race timer left pending' });

    for (const [index, timerId] of ids.entries()) {
      const types = await streamTypes(timerId);
      const reply = replies[index]!;
      expect([timerId, types]).toEqual([timerId, reply.outcome === 'cancelled' ? ['timer.set', 'timer.cancelled'] : ['timer.set', 'timer.fired']]);
      expect(reply.state).toBe(reply.outcome === 'cancelled' ? 'cancelled' : 'fired');
    }
  });

  it('stops a timer round as soon as it is no longer the leader', async () => {
    await sut.request(SchedulerCommands.setTimer, { workspaceId: 'ws1', timerId: 'fenced-1', purpose: 'retry', dueAt: inMs(3_600_000), actor });
    const client = await db.pool.connect();
    try {
      const fire = replicas[0]!.app.get(FireDueTimers);
      // A round that learns it is no longer the leader stops before touching any timer.
      const result = await fire.execute(client, new Date(Date.now() + 7_200_000), 10, () => false);
      expect(result).toEqual({ fired: 0, conflicts: 0 });
    } finally {
      client.release();
    }
    expect(await stateOf('fenced-1')).toBe('pending');
  });
});
