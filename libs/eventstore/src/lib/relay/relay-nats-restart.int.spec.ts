import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { topology } from '@packetagent/bus';
import { createTestDatabase, eventually, freePort, NatsServerProcess, type TestDatabase } from '@packetagent/testing';
import { PostgresEventStore, type NewEvent } from '../event-store';
import { OutboxRelay } from './relay';
import { readStreamEntries } from './stream-reader.testkit';

const event = (n: number): NewEvent => ({ type: 'test.happened', schemaVersion: 1, data: { n }, actor: { kind: 'system', id: 'test' } });

describe(`${OutboxRelay.name} across a NATS crash`, () => {
  let db: TestDatabase;
  let storeDir: string;
  let server: NatsServerProcess;
  let nc: NatsConnection;

  beforeAll(async () => {
    db = await createTestDatabase();
    storeDir = mkdtempSync(join(tmpdir(), 'pa-nats-crash-'));
    server = new NatsServerProcess(await freePort(), storeDir);
    await server.start();
    nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });

  afterAll(async () => {
    await nc.close().catch(() => undefined);
    await server.crash();
    await db.drop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('publishes everything exactly once after NATS is killed mid-stream and restarts, whatever the crash lost', async () => {
    const topo = topology('crash');
    const store = new PostgresEventStore(db.pool);
    const sut = new OutboxRelay(db.pool, nc, topo, { connectionString: db.url, pollIntervalMs: 50, leaderRetryMs: 100, verifyIntervalMs: 200 });
    await sut.start();
    for (let i = 0; i < 100; i++) await store.append(`test-crash${i % 5}`, 'any', [event(i)], { workspaceId: 'ws1' });
    await eventually(() => sut.status().cursor >= 100, { what: 'the first hundred published' });

    // JetStream acknowledges before its periodic fsync: a SIGKILL may lose acknowledged messages.
    await server.crash();
    for (let i = 100; i < 200; i++) await store.append(`test-crash${i % 5}`, 'any', [event(i)], { workspaceId: 'ws1' });
    await server.start();

    const { rows } = await db.pool.query<{ p: string }>('SELECT global_position AS p FROM events ORDER BY 1');
    const positions = rows.map((row) => Number(row.p));
    const entries = await eventually(async () => {
      const current = await readStreamEntries(nc, topo.eventsStream).catch(() => null);
      return current !== null && current.length >= positions.length && current;
    }, { timeoutMs: 30_000, what: 'every event in the stream after the restart' });
    await sut.stop();

    expect(entries.map((e) => e.position).sort((a, b) => a - b)).toEqual(positions);
    expect(new Set(entries.map((e) => e.eventId)).size).toBe(entries.length);
    // First-time publications stay in global order; only repairs of lost messages come later.
    const firstTime = entries.filter((e) => !e.repaired).map((e) => e.position);
    expect(firstTime).toEqual([...firstTime].sort((a, b) => a - b));
  });
});
