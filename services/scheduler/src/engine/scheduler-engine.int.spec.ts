import { topology, type Topology } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import { OutboxRelay, PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from '@packetagent/testing';
import { cronDedupeKey } from '../schedules/usecases/fire-due-schedules/fire-due-schedules';
import {
  cronTrigger,
  deploymentCreated,
  RecordingIntake,
  schedulerTestRegistry,
  startReplica,
  type ActivateRequest,
  type Replica,
} from '../testing/scheduler.testkit';
import { SchedulerEngine } from './scheduler-engine';

const EVERY_SECOND = '* * * * * *';

function scheduledAt(request: ActivateRequest): number {
  return Date.parse(String(request.details['scheduledAt']));
}

function expectOneActivationPerTick(requests: ActivateRequest[]): void {
  const keys = requests.map((request) => request.dedupeKey);
  expect(new Set(keys).size).toBe(keys.length);
}

/**
 * A leader that fails between intake's reply and recording it leaves that one tick to be sent
 * again by its successor, under the same dedupe key (so intake admits it once). Nothing else
 * may repeat.
 */
function expectOneActivationPerTickAcross(failureAt: number, requests: ActivateRequest[]): void {
  const seen = new Set<string>();
  const repeats: ActivateRequest[] = [];
  for (const request of requests) {
    if (seen.has(request.dedupeKey)) repeats.push(request);
    else seen.add(request.dedupeKey);
  }
  expect(repeats.length).toBeLessThanOrEqual(1);
  for (const request of repeats) expect(scheduledAt(request)).toBeLessThanOrEqual(failureAt);
}

describe(SchedulerEngine.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let relay: OutboxRelay;
  let intake: RecordingIntake;
  const replicas: Replica[] = [];

  const start = async (name: string, options: Parameters<typeof startReplica>[2] = {}) => {
    const replica = await startReplica({ db, topo, registry }, name, options);
    replicas.push(replica);
    return replica;
  };
  const leaderOf = (pair: Replica[]) => eventually(() => {
    const leading = pair.filter((replica) => replica.engine.status().isLeader);
    return leading.length === 1 && leading[0];
  }, { what: 'exactly one leader' });

  beforeEach(async () => {
    db = await createTestDatabase();
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = schedulerTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 50, leaderRetryMs: 100 });
    await relay.start();
    intake = new RecordingIntake(bus.nc, topo);
    await intake.start();
  });

  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((replica) => replica.close()));
    await intake.stop();
    await relay.stop();
    await bus.cleanup();
    await db.drop();
  });

  it('fires exactly one activation per tick with two replicas', async () => {
    const pair = [await start('a'), await start('b')];
    await store.append('deployment-d1', 'no_stream', [deploymentCreated('d1', [cronTrigger('t1', EVERY_SECOND)])], { workspaceId: 'ws1' });

    await eventually(() => intake.requestsFor('t1').length >= 5, { timeoutMs: 15_000, what: 'five ticks' });
    const requests = intake.requestsFor('t1');
    expectOneActivationPerTick(requests);
    const instants = requests.map(scheduledAt);
    // Whole seconds in firing order, none repeated. Whether a tick is skipped depends on how
    // late the round runs (a `skip` schedule drops late instants), so that is not asserted here.
    for (const instant of instants) expect(instant % 1_000).toBe(0);
    expect([...instants].sort((a, b) => a - b)).toEqual(instants);
    expect(requests[0]).toMatchObject({
      workspaceId: 'ws1',
      deploymentId: 'd1',
      triggerId: 't1',
      source: 'cron',
      actor: { kind: 'service', id: 'scheduler' },
      dedupeKey: cronDedupeKey('t1', new Date(scheduledAt(requests[0]!))),
      details: { scheduledAt: new Date(scheduledAt(requests[0]!)).toISOString(), firedAt: expect.any(String) },
    });
    expect(Date.parse(String(requests[0]!.details['firedAt']))).toBeGreaterThanOrEqual(scheduledAt(requests[0]!));
    await leaderOf(pair);
    // Under load the lead may move between the replicas; together they count what intake
    // accepted, once each reply is recorded (which may follow intake's receipt by a moment).
    await eventually(() => pair.reduce((sum, replica) => sum + replica.engine.status().firedTotal, 0) >= 5, { what: 'the replicas to count five ticks' });
  });

  it('lets the other replica go on with the ticks when the leader dies', async () => {
    const pair = [await start('a'), await start('b')];
    await store.append('deployment-d1', 'no_stream', [deploymentCreated('d1', [cronTrigger('t1', EVERY_SECOND)])], { workspaceId: 'ws1' });
    await eventually(() => intake.requestsFor('t1').length >= 2, { timeoutMs: 15_000, what: 'the first ticks' });
    const leader = await leaderOf(pair);
    const survivor = pair.find((replica) => replica !== leader)!;

    await leader.crash();
    // From here the dead replica can send nothing: any later tick comes from the survivor.
    const diedAt = Date.now();
    const next = await eventually(() => intake.requestsFor('t1').find((request) => scheduledAt(request) > diedAt), {
      timeoutMs: 15_000,
      intervalMs: 10,
      what: 'a tick after the crash',
    });
    expect(Date.parse(String(next.details['firedAt']))).toBeGreaterThan(diedAt);
    await eventually(() => survivor.engine.status().firedTotal >= 1, { what: 'the survivor to count what it fired' });
    expect(survivor.engine.status()).toMatchObject({ isLeader: true });
    await eventually(() => intake.requestsFor('t1').filter((request) => scheduledAt(request) > diedAt).length >= 3, { timeoutMs: 15_000, what: 'ticks go on' });
    expectOneActivationPerTickAcross(diedAt, intake.requestsFor('t1'));
  });

  it('stops firing at once when its lock connection is lost, and another leader goes on with the ticks', async () => {
    const pair = [await start('a'), await start('b')];
    await store.append('deployment-d1', 'no_stream', [deploymentCreated('d1', [cronTrigger('t1', EVERY_SECOND)])], { workspaceId: 'ws1' });
    await eventually(() => intake.requestsFor('t1').length >= 2, { timeoutMs: 15_000, what: 'the first ticks' });
    const leader = await leaderOf(pair);
    const pid = leader.engine.status().leaderBackendPid;
    expect(pid).toEqual(expect.any(Number));

    const cutAt = Date.now();
    await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await eventually(() => leader.engine.status().leaderBackendPid !== pid, { timeoutMs: 10_000, intervalMs: 5, what: 'the leader to notice' });
    expect(leader.engine.status().lastError).toMatch(/leadership connection/);
    await eventually(() => intake.requestsFor('t1').filter((request) => scheduledAt(request) > cutAt).length >= 3, { timeoutMs: 15_000, what: 'ticks after the cut' });
    await leaderOf(pair);
    expectOneActivationPerTickAcross(cutAt, intake.requestsFor('t1'));
  });

  it('applies the missed-tick policy after a downtime: skip drops late instants, fire_once fires the latest once', async () => {
    // The deployments were created at 07:30; the scheduler comes back at 10:10:00 (simulated).
    const realStart = Date.now();
    const simulatedStart = Date.parse('2026-06-01T10:10:00.000Z');
    const clock = () => new Date(simulatedStart + (Date.now() - realStart));
    const createdAt = new Date('2026-06-01T07:30:00.000Z');
    const solo = await start('solo', { clock });
    await store.append('deployment-skip', 'no_stream', [deploymentCreated('skip', [cronTrigger('t-skip', '0 * * * *', 'skip')], createdAt)], { workspaceId: 'ws1' });
    await store.append('deployment-once', 'no_stream', [deploymentCreated('once', [cronTrigger('t-once', '0 * * * *', 'fire_once')], createdAt)], { workspaceId: 'ws1' });
    await store.append('deployment-ontime', 'no_stream', [deploymentCreated('ontime', [cronTrigger('t-ontime', '10 10 * * *', 'skip')], createdAt)], { workspaceId: 'ws1' });

    const nextDue = async () =>
      Object.fromEntries(
        (await db.pool.query<{ trigger_id: string; next_due_at: Date }>(`SELECT trigger_id, next_due_at FROM scheduler.schedules`)).rows.map((row) => [
          row.trigger_id,
          row.next_due_at.toISOString(),
        ]),
      );
    await eventually(async () => {
      const due = await nextDue();
      return due['t-skip'] === '2026-06-01T11:00:00.000Z' && due['t-once'] === '2026-06-01T11:00:00.000Z' && due['t-ontime'] === '2026-06-02T10:10:00.000Z';
    }, { what: 'every schedule handled' });
    const rounds = solo.engine.status().rounds;
    await eventually(() => solo.engine.status().rounds >= rounds + 2, { what: 'two more rounds' });

    expect(intake.requestsFor('t-skip')).toEqual([]);
    expect(intake.requestsFor('t-once').map((request) => request.dedupeKey)).toEqual(['cron:t-once:2026-06-01T10:00:00.000Z']);
    expect(intake.requestsFor('t-ontime').map((request) => request.dedupeKey)).toEqual(['cron:t-ontime:2026-06-01T10:10:00.000Z']);
    expect(solo.engine.status()).toMatchObject({ firedTotal: 2, droppedTotal: 1 });
    const { rows } = await db.pool.query<{ trigger_id: string; last_fired_at: Date | null }>(`SELECT trigger_id, last_fired_at FROM scheduler.schedules ORDER BY trigger_id`);
    expect(rows.map((row) => [row.trigger_id, row.last_fired_at?.toISOString() ?? null])).toEqual([
      ['t-once', '2026-06-01T10:00:00.000Z'],
      ['t-ontime', '2026-06-01T10:10:00.000Z'],
      ['t-skip', null],
    ]);
  });

  it('retries an activation intake did not answer, and moves on once it does', async () => {
    await intake.stop();
    const solo = await start('solo', { retryDelayMs: 100 });
    await store.append('deployment-d1', 'no_stream', [deploymentCreated('d1', [cronTrigger('t1', EVERY_SECOND, 'fire_once')])], { workspaceId: 'ws1' });
    await eventually(() => solo.engine.status().failedTotal >= 2, { what: 'failed attempts' });
    expect(solo.engine.status().lastError).toMatch(/command_unavailable/);
    const { rows } = await db.pool.query<{ next_due_at: Date }>(`SELECT next_due_at FROM scheduler.schedules WHERE trigger_id = 't1'`);
    expect(rows[0]!.next_due_at.getTime()).toBeLessThan(Date.now());

    intake = new RecordingIntake(bus.nc, topo);
    await intake.start();
    await eventually(() => intake.requestsFor('t1').length >= 2, { what: 'activations once intake answers' });
    expectOneActivationPerTick(intake.requestsFor('t1'));
  });
});
