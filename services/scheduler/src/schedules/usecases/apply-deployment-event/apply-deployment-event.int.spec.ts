import { headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { BusHeaders, topology, type Topology } from '@packetagent/bus';
import { eventSubject, type EventRegistry } from '@packetagent/contracts';
import { OutboxRelay, PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from '@packetagent/testing';
import {
  cronTrigger,
  deploymentCreated,
  deploymentPaused,
  deploymentRevoked,
  deploymentRolledBack,
  schedulerTestRegistry,
  startReplica,
  type Replica,
} from '../../../testing/scheduler.testkit';
import { ApplyDeploymentEvent } from './apply-deployment-event';

interface Row {
  trigger_id: string;
  expression: string;
  missed: string;
  active: boolean;
  next_due_at: Date | null;
  updated_at: Date;
}

// Far-off instants: nothing fires while these tests look at the projection.
const YEARLY = '0 0 1 1 *';

describe(ApplyDeploymentEvent.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let registry: EventRegistry;
  let store: PostgresEventStore;
  let relay: OutboxRelay;
  let replica: Replica;

  const schedulesOf = async (deploymentId: string): Promise<Row[]> =>
    (await db.pool.query<Row>(`SELECT * FROM scheduler.schedules WHERE deployment_id = $1 ORDER BY trigger_id`, [deploymentId])).rows;
  const appliedPosition = async (deploymentId: string): Promise<number> =>
    Number((await db.pool.query<{ p: string }>(`SELECT last_position AS p FROM scheduler.deployments WHERE deployment_id = $1`, [deploymentId])).rows[0]?.p ?? 0);

  beforeAll(async () => {
    db = await createTestDatabase();
    bus = await createTestBus();
    topo = topology(bus.prefix);
    registry = schedulerTestRegistry();
    store = new PostgresEventStore(db.pool, { registry });
    relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 50, leaderRetryMs: 100 });
    await relay.start();
    replica = await startReplica({ db, topo, registry }, 'projection');
  });

  afterAll(async () => {
    await replica.close();
    await relay.stop();
    await bus.cleanup();
    await db.drop();
  });

  it('follows a deployment: created schedules its cron triggers, rollback replaces them, pause keeps them, revoke stops them', async () => {
    const created = await store.append(
      'deployment-d1',
      'no_stream',
      [deploymentCreated('d1', [cronTrigger('t-a', YEARLY), cronTrigger('t-b', '0 9 * * *', 'fire_once', 'Europe/Paris'), { triggerId: 't-hook', key: 'webhook', kind: 'webhook' }])],
      { workspaceId: 'ws1' },
    );
    await eventually(async () => (await appliedPosition('d1')) === created.lastGlobalPosition, { what: 'deployment.created applied' });
    const afterCreate = await schedulesOf('d1');
    expect(afterCreate.map((row) => [row.trigger_id, row.expression, row.missed, row.active])).toEqual([
      ['t-a', YEARLY, 'skip', true],
      ['t-b', '0 9 * * *', 'fire_once', true],
    ]);
    const eventTime = new Date(created.events[0]!.occurredAt);
    expect(afterCreate[0]!.next_due_at).toEqual(new Date(Date.UTC(eventTime.getUTCFullYear() + 1, 0, 1)));

    // The rollback keeps t-a as it was, changes t-b's expression, drops nothing else and adds t-c.
    const rolledBack = await store.append(
      'deployment-d1',
      1,
      [deploymentRolledBack([cronTrigger('t-a', YEARLY), cronTrigger('t-b', '30 9 * * *', 'skip', 'Europe/Paris'), cronTrigger('t-c', YEARLY)])],
      { workspaceId: 'ws1' },
    );
    await eventually(async () => (await appliedPosition('d1')) === rolledBack.lastGlobalPosition, { what: 'deployment.rolled_back applied' });
    const afterRollback = await schedulesOf('d1');
    expect(afterRollback.map((row) => [row.trigger_id, row.expression, row.missed, row.active])).toEqual([
      ['t-a', YEARLY, 'skip', true],
      ['t-b', '30 9 * * *', 'skip', true],
      ['t-c', YEARLY, 'skip', true],
    ]);
    expect(afterRollback[0]!.next_due_at).toEqual(afterCreate[0]!.next_due_at);

    // A second rollback drops t-c.
    const second = await store.append('deployment-d1', 2, [deploymentRolledBack([cronTrigger('t-a', YEARLY), cronTrigger('t-b', '30 9 * * *', 'skip', 'Europe/Paris')])], {
      workspaceId: 'ws1',
    });
    await eventually(async () => (await appliedPosition('d1')) === second.lastGlobalPosition, { what: 'second rollback applied' });
    expect((await schedulesOf('d1')).map((row) => [row.trigger_id, row.active])).toEqual([['t-a', true], ['t-b', true], ['t-c', false]]);

    // Pausing is intake's business: the schedules keep firing (intake defers the runs).
    await store.append('deployment-d1', 3, [deploymentPaused()], { workspaceId: 'ws1' });
    const revoked = await store.append('deployment-d1', 4, [deploymentRevoked()], { workspaceId: 'ws1' });
    await eventually(async () => (await appliedPosition('d1')) === revoked.lastGlobalPosition, { what: 'deployment.revoked applied' });
    expect((await schedulesOf('d1')).map((row) => [row.trigger_id, row.active])).toEqual([['t-a', false], ['t-b', false], ['t-c', false]]);
  });

  it('applies a redelivered or republished deployment event once, and never goes back to an older one', async () => {
    const created = await store.append('deployment-d2', 'no_stream', [deploymentCreated('d2', [cronTrigger('t-old', YEARLY)])], { workspaceId: 'ws1' });
    const rolledBack = await store.append('deployment-d2', 1, [deploymentRolledBack([cronTrigger('t-new', YEARLY)])], { workspaceId: 'ws1' });
    await eventually(async () => (await appliedPosition('d2')) === rolledBack.lastGlobalPosition, { what: 'rollback applied' });
    const before = await schedulesOf('d2');
    expect(before.map((row) => [row.trigger_id, row.active])).toEqual([['t-new', true], ['t-old', false]]);

    // Both events again on the wire, as a relay repair would publish them (new message ids).
    const js = jetstream(bus.nc);
    for (const event of [...created.events, ...rolledBack.events]) {
      const h = natsHeaders();
      h.set(BusHeaders.Repaired, 'true');
      await js.publish(eventSubject(topo.eventsSubjectRoot, event), JSON.stringify(event), { msgID: `${event.id}:repair:test`, headers: h });
    }
    // The consumer handles messages in order: once a later deployment is applied, the copies were handled.
    const marker = await store.append('deployment-d3', 'no_stream', [deploymentCreated('d3', [cronTrigger('t-marker', YEARLY)])], { workspaceId: 'ws1' });
    await eventually(async () => (await appliedPosition('d3')) === marker.lastGlobalPosition, { what: 'the marker deployment applied' });

    expect(await schedulesOf('d2')).toEqual(before);
    expect(await appliedPosition('d2')).toBe(rolledBack.lastGlobalPosition);

    const sut = replica.app.get(ApplyDeploymentEvent);
    const stored = await store.readStream('deployment-d2');
    expect(await sut.execute(registry.decode(stored[0]!))).toBe('ignored');
    expect(await sut.execute(registry.decode(stored[1]!))).toBe('ignored');
    expect(await schedulesOf('d2')).toEqual(before);
  });
});
