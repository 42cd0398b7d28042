import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { WatchdogRows } from './watchdog.rows';

// Real: Postgres with every migration (the tables and indexes the sweep reads). Seeded with SQL
// rather than through the store: 10 000 finished runs of ten events each, as a log looks after
// a while, plus the few runs that have no owner.

const RUNS = 10_000;
const EVENTS_PER_RUN = 10;
const TYPES = ['run.admitted', 'run.claimed', 'run.started', 'run.model_turn', 'run.checkpoint', 'run.tool_decided', 'run.tool_result', 'run.model_turn', 'run.checkpoint', 'run.succeeded'];

async function seed(db: TestDatabase): Promise<void> {
  await db.pool.query(
    `INSERT INTO streams (stream_id, workspace_id, category) SELECT 'run-done-' || n, 'ws1', 'run' FROM generate_series(1, $1) AS n`,
    [RUNS],
  );
  await db.pool.query(
    `INSERT INTO events (event_id, stream_id, stream_version, type, schema_version, workspace_id, occurred_at, data, metadata, digest)
     SELECT gen_random_uuid(), 'run-done-' || n, v, ($2::text[])[v], 1, 'ws1', now() - interval '1 hour', '{}', '{}', repeat('0', 64)
       FROM generate_series(1, $1) AS n, generate_series(1, $3) AS v
      ORDER BY n, v`,
    [RUNS, TYPES, EVENTS_PER_RUN],
  );
  await db.pool.query(
    `INSERT INTO supervisor.runs (run_id, workspace_id, status, claims) SELECT 'done-' || n, 'ws1', 'terminal', 1 FROM generate_series(1, $1) AS n`,
    [RUNS],
  );
}

async function append(db: TestDatabase, stream: string, type: string, version: number, occurredAt = "now() - interval '1 minute'"): Promise<number> {
  if (version === 1) await db.pool.query(`INSERT INTO streams (stream_id, workspace_id, category) VALUES ($1, 'ws1', 'run')`, [stream]);
  const { rows } = await db.pool.query<{ global_position: string }>(
    `INSERT INTO events (event_id, stream_id, stream_version, type, schema_version, workspace_id, occurred_at, data, metadata, digest)
     VALUES (gen_random_uuid(), $1, $2, $3, 1, 'ws1', ${occurredAt}, '{}', '{}', repeat('0', 64)) RETURNING global_position`,
    [stream, version, type],
  );
  return Number(rows[0]!.global_position);
}

const relayAt = async (db: TestDatabase, position: number) =>
  db.pool.query(`INSERT INTO relay_cursors (name, position) VALUES ('default', $1) ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position`, [position]);

describe(WatchdogRows.name, () => {
  let db: TestDatabase;
  let sut: WatchdogRows;
  let stuckAt: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    sut = new WatchdogRows(db.pool);
    await seed(db);
    stuckAt = await append(db, 'run-stuck', 'run.admitted', 1);
    await append(db, 'run-cancelled', 'run.admitted', 1);
    await append(db, 'run-cancelled', 'run.cancelled', 2);
    await db.pool.query(`INSERT INTO supervisor.runs (run_id, workspace_id, status, claims) VALUES ('claimed', 'ws1', 'active', 1)`);
    await append(db, 'run-claimed', 'run.admitted', 1);
    const head = await append(db, 'run-after', 'run.deferred', 1);
    await relayAt(db, head);
    await db.pool.query('ANALYZE');
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
  });

  it('finds, among 10 000 finished runs, only the admitted run that was neither claimed nor ended, and moves its cursor up to it', async () => {
    const found = await sut.unclaimedAdmissions('default', 500);
    expect(found).toEqual([{ runId: 'stuck', workspaceId: 'ws1', position: stuckAt, admittedAt: expect.any(Date) }]);
    const { rows } = await db.pool.query<{ admitted_after: string }>(`SELECT admitted_after FROM supervisor.watchdog WHERE name = 'default'`);
    expect(Number(rows[0]!.admitted_after)).toBe(stuckAt - 1);
    // The next sweep starts there and finds it again, until it is claimed.
    expect((await sut.unclaimedAdmissions('default', 500)).map((run) => run.runId)).toEqual(['stuck']);
  });

  it('looks no further than the relay has published', async () => {
    const later = await append(db, 'run-unpublished', 'run.admitted', 1);
    expect((await sut.unclaimedAdmissions('default', 500)).map((run) => run.runId)).toEqual(['stuck']);
    await relayAt(db, later);
    expect((await sut.unclaimedAdmissions('default', 500)).map((run) => run.runId)).toEqual(['stuck', 'unpublished']);
  });

  it('moves the cursor to the relay once every admission below it is claimed or ended', async () => {
    await db.pool.query(`INSERT INTO supervisor.runs (run_id, workspace_id, status, claims) VALUES ('stuck', 'ws1', 'active', 1), ('unpublished', 'ws1', 'waiting', 1)`);
    expect(await sut.unclaimedAdmissions('default', 500)).toEqual([]);
    const { rows } = await db.pool.query<{ admitted_after: string; relay: string }>(
      `SELECT admitted_after, (SELECT position FROM relay_cursors WHERE name = 'default') AS relay FROM supervisor.watchdog WHERE name = 'default'`,
    );
    expect(rows[0]!.admitted_after).toBe(rows[0]!.relay);
  });

  it('lists active leases lapsed past the grace, parked runs waiting on attention, and quarantined runs', async () => {
    await db.pool.query(
      `INSERT INTO supervisor.runs (run_id, workspace_id, status, holder, lease_until, waiting_on, quarantine_reason, claims) VALUES
         ('lapsed-long', 'ws1', 'active', 'replica-a', now() - interval '1 minute', NULL, NULL, 1),
         ('lapsed-now', 'ws1', 'active', 'replica-a', now() - interval '1 second', NULL, NULL, 1),
         ('held', 'ws1', 'active', 'replica-b', now() + interval '10 seconds', NULL, NULL, 1),
         ('asks', 'ws1', 'waiting', NULL, NULL, '0198a000-0000-7000-8000-000000000001', NULL, 1),
         ('paused', 'ws1', 'waiting', NULL, NULL, NULL, NULL, 1),
         ('broken', 'ws1', 'quarantined', NULL, NULL, NULL, 'event at version 2 does not match its digest', 1)`,
    );
    expect((await sut.lapsedLeases(30_000, 500)).map((run) => run.runId)).toEqual(['lapsed-long']);
    expect(await sut.waitingOnAttention(500)).toEqual([{ runId: 'asks', workspaceId: 'ws1', attentionId: '0198a000-0000-7000-8000-000000000001' }]);
    expect(await sut.quarantined(500)).toEqual([{ runId: 'broken', workspaceId: 'ws1', reason: 'event at version 2 does not match its digest' }]);
  });

  it('replaces the findings with each sweep\'s and counts them per cause', async () => {
    const seen = new Date('2026-03-01T12:00:00.000Z');
    const base = { workspaceId: 'ws1', detail: 'd', firstSeenAt: seen, wakes: 1, failedWakes: 0, attentionId: null };
    await sut.saveSweep([{ ...base, runId: 'a', cause: 'unclaimed' }, { ...base, runId: 'b', cause: 'quarantined', attentionId: 'att-b' }], 3);
    expect(await sut.counts()).toEqual(expect.arrayContaining([{ cause: 'unclaimed', count: 1 }, { cause: 'quarantined', count: 1 }]));
    await sut.saveSweep([{ ...base, runId: 'b', cause: 'quarantined', wakes: 0 }], 2);
    const kept = await sut.findings();
    expect([...kept.values()]).toEqual([expect.objectContaining({ runId: 'b', cause: 'quarantined', attentionId: 'att-b', firstSeenAt: seen, wakes: 0 })]);
    await sut.saveSweep([], 1);
    expect(await sut.counts()).toEqual([]);
  });
});
