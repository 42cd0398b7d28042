import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { EventRegistry } from '@packetagent/contracts';
import { z } from 'zod';
import { PostgresEventStore, type NewEvent } from './event-store';
import { ConcurrencyError, EventTooLargeError, InvalidEventError } from './errors';
import { verifyDigestChains } from './verify-chain';

const actor = { kind: 'system', id: 'test' } as const;
const event = (type: string, data: unknown): NewEvent => ({ type, schemaVersion: 1, data, actor });

describe(PostgresEventStore.name, () => {
  let db: TestDatabase;
  let sut: PostgresEventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    sut = new PostgresEventStore(db.pool, { maxEventBytes: 4_096 });
  });
  afterAll(() => db.drop());

  const eventCount = async () => Number((await db.pool.query('SELECT count(*) FROM events')).rows[0].count);

  it('appends events in order with versions, positions and a digest chain', async () => {
    const result = await sut.append('run-a1', 'no_stream', [event('run.admitted', { n: 1 }), event('run.started', { n: 2 })], { workspaceId: 'ws1' });
    const more = await sut.append('run-a1', 2, [event('run.finished', { ok: true })], { workspaceId: 'ws1' });

    const stored = await sut.readStream('run-a1');
    expect(stored.map((e) => [e.type, e.streamVersion])).toEqual([['run.admitted', 1], ['run.started', 2], ['run.finished', 3]]);
    expect(stored.map((e) => e.globalPosition)).toEqual([result.firstGlobalPosition, result.lastGlobalPosition, more.lastGlobalPosition]);
    expect(stored[0]!.prevDigest).toBeNull();
    expect(stored[1]!.prevDigest).toBe(stored[0]!.digest);
    expect(stored[2]!.prevDigest).toBe(stored[1]!.digest);
    expect(stored).toEqual(more.events.length === 1 ? [...result.events, ...more.events] : []);
  });

  it('lets exactly one of two concurrent appends at the same expected version win', async () => {
    await sut.append('run-race', 'no_stream', [event('run.admitted', {})], { workspaceId: 'ws1' });
    const other = new PostgresEventStore(db.pool);
    const before = await eventCount();

    const outcomes = await Promise.allSettled([
      sut.append('run-race', 1, [event('run.started', { by: 'a' }), event('run.step', { by: 'a' })], { workspaceId: 'ws1' }),
      other.append('run-race', 1, [event('run.started', { by: 'b' }), event('run.step', { by: 'b' })], { workspaceId: 'ws1' }),
    ]);

    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(ConcurrencyError);
    expect(lost[0]!.reason).toMatchObject({ expected: 1, actual: 3, code: 'concurrency_conflict' });
    expect(await eventCount()).toBe(before + 2);
    const versions = (await sut.readStream('run-race')).map((e) => e.streamVersion);
    expect(versions).toEqual([1, 2, 3]);
  });

  it('refuses to create a stream that exists', async () => {
    await sut.append('run-exists', 'no_stream', [event('run.admitted', {})], { workspaceId: 'ws1' });
    await expect(sut.append('run-exists', 'no_stream', [event('run.admitted', {})], { workspaceId: 'ws1' })).rejects.toMatchObject({
      code: 'concurrency_conflict',
      actual: 1,
    });
  });

  it('appends at whatever version the stream has with "any"', async () => {
    await sut.append('run-any', 'any', [event('run.admitted', {})], { workspaceId: 'ws1' });
    const result = await sut.append('run-any', 'any', [event('run.started', {})], { workspaceId: 'ws1' });
    expect(result.streamVersion).toBe(2);
  });

  it('refuses a stream of another workspace and writes nothing', async () => {
    await sut.append('run-tenant', 'no_stream', [event('run.admitted', {})], { workspaceId: 'ws1' });
    const before = await eventCount();
    await expect(sut.append('run-tenant', 1, [event('run.started', {})], { workspaceId: 'ws2' })).rejects.toBeInstanceOf(InvalidEventError);
    expect(await eventCount()).toBe(before);
  });

  it.each([
    ['a missing stream id', '', [event('run.started', {})], 'stream'],
    ['a stream id without a category', 'nocategory', [event('run.started', {})], 'stream'],
    ['no events', 'run-x', [], 'events'],
    ['a type that is not a dotted name', 'run-x', [event('RunStarted', {})], 'events[0].type'],
    ['undefined data', 'run-x', [{ ...event('run.started', {}), data: undefined }], 'events[0].data'],
    ['a function in data', 'run-x', [event('run.started', { f: () => 1 })], 'events[0].data.f'],
    ['a bigint in data', 'run-x', [event('run.started', { n: 10n })], 'events[0].data.n'],
    ['a NaN in data', 'run-x', [event('run.started', { n: Number.NaN })], 'events[0].data.n'],
    ['a Date in data', 'run-x', [event('run.started', { at: new Date() })], 'events[0].data.at'],
    ['a NUL character in data', 'run-x', [event('run.started', { s: 'a\u0000b' })], 'events[0].data.s'],
    ['a lone surrogate in data', 'run-x', [event('run.started', { s: '\ud800' })], 'events[0].data.s'],
    ['a missing actor', 'run-x', [{ type: 'run.started', schemaVersion: 1, data: {} }], 'events[0].actor'],
  ])('rejects %s with a typed error naming the path, writing nothing', async (_what, stream, events, path) => {
    const before = await eventCount();
    const error = await sut.append(stream, 'any', events as NewEvent[], { workspaceId: 'ws1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidEventError);
    expect((error as InvalidEventError).issues.map((i) => i.path)).toContain(path);
    expect(await eventCount()).toBe(before);
  });

  it('refuses an event id that is already stored, writing nothing', async () => {
    const id = (await sut.append('run-dup', 'no_stream', [event('run.admitted', {})], { workspaceId: 'ws1' })).events[0]!.id;
    const before = await eventCount();
    const error = await sut.append('run-dup', 1, [{ ...event('run.started', {}), id }], { workspaceId: 'ws1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidEventError);
    expect((error as InvalidEventError).issues[0]!.message).toMatch(/already stored/);
    expect(await eventCount()).toBe(before);
    expect(await sut.streamVersion('run-dup')).toBe(1);
  });

  it('reports a conflict when another process appended after this one last saw the stream', async () => {
    await sut.append('run-stale', 'no_stream', [event('run.admitted', {})], { workspaceId: 'ws1' });
    await new PostgresEventStore(db.pool).append('run-stale', 1, [event('run.started', {})], { workspaceId: 'ws1' });
    // sut still remembers the stream at version 1.
    await expect(sut.append('run-stale', 1, [event('run.started', {})], { workspaceId: 'ws1' })).rejects.toMatchObject({ code: 'concurrency_conflict', actual: 2 });
    await expect(sut.append('run-stale', 2, [event('run.step', {})], { workspaceId: 'ws1' })).resolves.toMatchObject({ streamVersion: 3 });
  });

  it('rejects an event above the configured size limit and writes nothing of the append', async () => {
    const before = await eventCount();
    const error = await sut
      .append('run-big', 'no_stream', [event('run.started', { ok: 1 }), event('run.step', { blob: 'x'.repeat(5_000) })], { workspaceId: 'ws1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventTooLargeError);
    expect(error).toMatchObject({ index: 1, limitBytes: 4_096 });
    expect(await eventCount()).toBe(before);
    expect(await sut.streamVersion('run-big')).toBe(0);
  });

  it('validates data against the registry and refuses unknown types', async () => {
    const registry = new EventRegistry().register('run.started', 1, z.object({ input: z.string() }));
    const typed = new PostgresEventStore(db.pool, { registry });
    await typed.append('run-typed', 'no_stream', [{ type: 'run.started', data: { input: 'x' }, actor }], { workspaceId: 'ws1' });
    await expect(typed.append('run-typed', 1, [{ type: 'run.started', data: { input: 3 }, actor }], { workspaceId: 'ws1' })).rejects.toBeInstanceOf(InvalidEventError);
    await expect(typed.append('run-typed', 1, [{ type: 'run.unknown', data: {}, actor }], { workspaceId: 'ws1' })).rejects.toBeInstanceOf(InvalidEventError);
    expect(await typed.streamVersion('run-typed')).toBe(1);
  });

  it('reads everything after a global position, in order', async () => {
    const all = await sut.readAll({ after: 0, limit: 10_000 });
    const positions = all.map((e) => e.globalPosition);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    const tail = await sut.readAll({ after: positions[2]! });
    expect(tail[0]!.globalPosition).toBeGreaterThan(positions[2]!);
  });

  it('keeps only the newest snapshot of a stream', async () => {
    await sut.append('run-snap', 'no_stream', [event('run.admitted', {}), event('run.started', {})], { workspaceId: 'ws1' });
    await sut.saveSnapshot('run-snap', 'state', { streamVersion: 2, schemaVersion: 1, state: { phase: 'act' } });
    await sut.saveSnapshot('run-snap', 'state', { streamVersion: 1, schemaVersion: 1, state: { phase: 'plan' } });
    const snapshot = await sut.loadSnapshot('run-snap', 'state');
    expect(snapshot).toMatchObject({ streamVersion: 2, state: { phase: 'act' } });
    expect(snapshot!.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses updates and deletes of stored events at the database', async () => {
    await expect(db.pool.query(`UPDATE events SET data = '{}' WHERE stream_id = 'run-a1'`)).rejects.toThrow(/append-only/);
    await expect(db.pool.query(`DELETE FROM events WHERE stream_id = 'run-a1'`)).rejects.toThrow(/append-only/);
  });

  it('names the stream and position of a tampered event in the chain verification', async () => {
    expect((await verifyDigestChains(db.pool)).ok).toBe(true);
    const target = (await sut.readStream('run-a1'))[1]!;
    const client = await db.pool.connect();
    try {
      await client.query(`SET session_replication_role = replica`); // what an attacker with DBA rights would do
      await client.query(`UPDATE events SET data = '{"n": 99}' WHERE global_position = $1`, [target.globalPosition]);
    } finally {
      await client.query(`SET session_replication_role = origin`);
      client.release();
    }

    const report = await verifyDigestChains(db.pool);

    expect(report.ok).toBe(false);
    expect(report.breaks).toEqual([
      expect.objectContaining({ stream: 'run-a1', streamVersion: 2, globalPosition: target.globalPosition, reason: 'digest_mismatch' }),
    ]);
  });
});
