import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { topology, type Topology } from '@packetagent/bus';
import { createTestBus, createTestDatabase, eventually, testEnv, type TestBus, type TestDatabase } from '@packetagent/testing';
import { PostgresEventStore, type NewEvent } from '../event-store';
import { OutboxRelay } from './relay';
import { readStreamEntries } from './stream-reader.testkit';

const ROOT = resolve(__dirname, '../../../../..');
const actor = { kind: 'system', id: 'test' } as const;
const event = (n: number): NewEvent => ({ type: 'test.happened', schemaVersion: 1, data: { n }, actor });

async function storedPositions(db: TestDatabase): Promise<number[]> {
  const { rows } = await db.pool.query<{ p: string }>('SELECT global_position AS p FROM events ORDER BY global_position');
  return rows.map((row) => Number(row.p));
}

function expectExactlyOnceInOrder(entries: { position: number; eventId: string }[], positions: number[]) {
  expect(entries.map((e) => e.position)).toEqual(positions);
  expect(new Set(entries.map((e) => e.eventId)).size).toBe(entries.length);
}

describe(OutboxRelay.name, () => {
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;
  let store: PostgresEventStore;
  const relays: OutboxRelay[] = [];

  const startRelay = async (options: Partial<ConstructorParameters<typeof OutboxRelay>[3]> = {}) => {
    const relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 100, leaderRetryMs: 100, ...options });
    relays.push(relay);
    await relay.start();
    return relay;
  };

  beforeEach(async () => {
    db = await createTestDatabase({ max: 20 });
    bus = await createTestBus();
    topo = topology(bus.prefix);
    store = new PostgresEventStore(db.pool);
  });

  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
    await bus.cleanup();
    await db.drop();
  });

  it('publishes every event exactly once, in global order, while transactions commit out of order', async () => {
    const sut = await startRelay();
    await store.append('test-first', 'no_stream', [event(0)], { workspaceId: 'ws1' });

    // A transaction that allocates a position and stays open while later ones commit...
    const held = await db.pool.connect();
    await held.query('BEGIN');
    const heldAppend = await store.append('test-held', 'no_stream', [event(-1), event(-2)], { workspaceId: 'ws1', client: held });
    // ...and one that allocates a position and then rolls back.
    const doomed = await db.pool.connect();
    await doomed.query('BEGIN');
    await store.append('test-doomed', 'no_stream', [event(-3)], { workspaceId: 'ws1', client: doomed });

    const writers = Array.from({ length: 8 }, (_, w) => {
      const writer = new PostgresEventStore(db.pool);
      return (async () => {
        for (let i = 0; i < 25; i++) {
          const batch = i % 5 === 0 ? [event(i), event(i + 1000)] : [event(i)];
          await writer.append(`test-w${w}`, i === 0 ? 'no_stream' : 'any', batch, { workspaceId: 'ws1' });
        }
      })();
    });
    await Promise.all(writers);

    await eventually(() => sut.status().waitingOn === heldAppend.firstGlobalPosition, { what: 'relay to wait at the held position' });
    const whileHeld = await readStreamEntries(bus.nc, topo.eventsStream);
    expect(whileHeld.every((e) => e.position < heldAppend.firstGlobalPosition)).toBe(true);

    await doomed.query('ROLLBACK');
    doomed.release();
    await held.query('COMMIT');
    held.release();
    store.ringDoorbell();

    const positions = await storedPositions(db);
    expect(positions).toHaveLength(1 + 2 + 8 * 30);
    const entries = await eventually(async () => {
      const current = await readStreamEntries(bus.nc, topo.eventsStream);
      return current.length >= positions.length && current;
    }, { what: 'every event on the stream' });
    expectExactlyOnceInOrder(entries, positions);
  });

  it('never skips a position held by a transaction whose id is newer than every completed one', async () => {
    // Postgres leaves running ids at or above the snapshot's xmax out of its in-progress list:
    // with only the holder running and nothing newer completed, the list is empty although the
    // hole is about to fill. No doorbell is rung here: a NOTIFY would complete a newer id.
    const sut = await startRelay({ doorbellChannel: 'test_silent' });
    await eventually(() => sut.status().lastVerification !== null, { what: 'the relay to finish activating' });
    const silentStore = new PostgresEventStore(db.pool, { doorbellChannel: null });
    const older = await db.pool.connect();
    const holder = await db.pool.connect();
    await older.query('BEGIN');
    await older.query('SELECT pg_current_xact_id()');
    await holder.query('BEGIN');
    const held = await silentStore.append('test-newer-id', 'no_stream', [event(1)], { workspaceId: 'ws1', client: holder });
    const later = await silentStore.append('test-older-id', 'no_stream', [event(2)], { workspaceId: 'ws1', client: older });
    expect(later.firstGlobalPosition).toBeGreaterThan(held.firstGlobalPosition);
    await older.query('COMMIT');
    older.release();

    await eventually(() => sut.status().waitingOn === held.firstGlobalPosition, { what: 'the relay to wait at the held position' });
    await holder.query('COMMIT');
    holder.release();

    const entries = await eventually(async () => {
      const current = await readStreamEntries(bus.nc, topo.eventsStream);
      return current.length === 2 && current;
    }, { what: 'both events on the stream' });
    expectExactlyOnceInOrder(entries, [held.firstGlobalPosition, later.firstGlobalPosition]);
  });

  it('loses and duplicates nothing when its process is killed mid-burst and restarted', async () => {
    const spawnRelay = (): ChildProcess =>
      spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'libs/eventstore/src/bin/relay.ts')], {
        cwd: ROOT,
        env: {
          ...process.env,
          SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json'),
          PACKETAGENT_DATABASE_URL: db.url,
          PACKETAGENT_NATS_URL: testEnv.natsUrl,
          PACKETAGENT_BUS_PREFIX: bus.prefix,
          PACKETAGENT_RELAY_BATCH_SIZE: '50',
          PACKETAGENT_RELAY_POLL_MS: '50',
        },
        stdio: 'ignore',
      });
    const writing = (async () => {
      for (let i = 0; i < 1_500; i += 5) {
        await store.append(`test-burst${i % 7}`, 'any', [event(i), event(i + 1), event(i + 2), event(i + 3), event(i + 4)], { workspaceId: 'ws1' });
      }
    })();
    const first = spawnRelay();
    const jsm = await jetstreamManager(bus.nc);
    await eventually(async () => ((await jsm.streams.info(topo.eventsStream).catch(() => null))?.state.messages ?? 0) >= 200, {
      timeoutMs: 20_000,
      what: 'the first relay to publish part of the burst',
    });
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    await exited;
    await writing;

    const second = spawnRelay();
    try {
      const positions = await storedPositions(db);
      const entries = await eventually(async () => {
        const current = await readStreamEntries(bus.nc, topo.eventsStream);
        return current.length >= positions.length && current;
      }, { timeoutMs: 20_000, what: 'the restarted relay to catch up' });
      expectExactlyOnceInOrder(entries, positions);
    } finally {
      second.kill('SIGTERM');
    }
  });

  it('detects messages deleted from the stream behind its back and republishes them', async () => {
    await startRelay({ verifyIntervalMs: 100 });
    for (let i = 0; i < 20; i++) await store.append(`test-del${i}`, 'no_stream', [event(i)], { workspaceId: 'ws1' });
    const positions = await storedPositions(db);
    const before = await eventually(async () => {
      const current = await readStreamEntries(bus.nc, topo.eventsStream);
      return current.length === positions.length && current;
    }, { what: 'all events on the stream' });

    const jsm = await jetstreamManager(bus.nc);
    const lost = [before[4]!, before[11]!];
    for (const entry of lost) await jsm.streams.deleteMessage(topo.eventsStream, entry.seq);

    const after = await eventually(async () => {
      const current = await readStreamEntries(bus.nc, topo.eventsStream);
      return current.length === positions.length && current;
    }, { what: 'the lost events to be republished' });
    expect(after.map((e) => e.position).sort((a, b) => a - b)).toEqual(positions);
    expect(after.filter((e) => e.repaired).map((e) => e.position)).toEqual(lost.map((e) => e.position));
  });

  it('runs one active replica and hands over when it stops', async () => {
    const a = await startRelay();
    const b = await startRelay();
    await eventually(() => [a, b].filter((r) => r.status().role === 'active').length === 1, { what: 'one active relay' });
    const [active, standby] = a.status().role === 'active' ? [a, b] : [b, a];

    await store.append('test-handover', 'no_stream', [event(1)], { workspaceId: 'ws1' });
    await eventually(() => active.status().cursor >= 1, { what: 'the active relay to publish' });
    await active.stop();
    await eventually(() => standby.status().role === 'active', { what: 'the standby to take over' });
    await store.append('test-handover', 1, [event(2)], { workspaceId: 'ws1' });

    const positions = await storedPositions(db);
    const entries = await eventually(async () => {
      const current = await readStreamEntries(bus.nc, topo.eventsStream);
      return current.length === positions.length && current;
    }, { what: 'the standby to publish' });
    expectExactlyOnceInOrder(entries, positions);
  });
});
