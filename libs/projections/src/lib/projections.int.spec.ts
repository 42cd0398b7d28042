import { EventRegistry, runStreamId, type DecodedEvent } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { PROJECTOR_SCHEMA, ProjectionWriter } from './applier';
import { PROJECTIONS } from './catalog';
import { catchUpFromStore } from './catch-up';
import { projectionDdl } from './ddl';
import { ProjectionOutOfOrderError } from './errors';
import { runsProjection } from './projections/runs.projection';
import { runTimelineProjection } from './projections/run-timeline.projection';
import { diffProjection, rebuildProjection, SHADOW_SCHEMA } from './rebuild';
import { registerProjectorEvents } from './registry';
import { runHistory } from './testing/run-history';

const actor = { kind: 'service', id: 'test' } as const;

describe(ProjectionWriter.name, () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  const registry = registerProjectorEvents(new EventRegistry());

  beforeEach(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { registry, doorbellChannel: null });
  });
  afterEach(async () => {
    await db.drop();
  });

  /** Appends a run's history and answers its events decoded, as the relay would deliver them. */
  async function appendRun(runId: string, workspaceId = 'ws1'): Promise<DecodedEvent[]> {
    const history = runHistory(runId);
    await store.append(runStreamId(runId), 'no_stream', history.map((event) => ({ ...event, actor })), { workspaceId });
    const all = await store.readAll({ workspaceId });
    return all.filter((event) => event.stream === runStreamId(runId)).map((event) => registry.decode(event));
  }

  const runRow = async (runId: string) => (await db.pool.query(`SELECT state, phase, iteration, tool_calls, cost_usd FROM projector.runs WHERE run_id = $1`, [runId])).rows[0];
  const timelineCount = async () => Number((await db.pool.query(`SELECT count(*) AS n FROM projector.run_timeline`)).rows[0].n);

  it('applies each event to every projection once, and a redelivery changes nothing', async () => {
    const events = await appendRun('r1');
    const sut = new ProjectionWriter(db.pool, PROJECTIONS);
    for (const event of events) expect(Object.values(await sut.apply(event)).every((outcome) => outcome === 'applied')).toBe(true);
    const before = await runRow('r1');
    expect(before).toEqual({ state: 'succeeded', phase: 'ended', iteration: 1, tool_calls: 1, cost_usd: 0.25 });
    expect(await timelineCount()).toBe(events.length);

    for (const event of events) expect(Object.values(await sut.apply(event)).every((outcome) => outcome === 'duplicate')).toBe(true);
    expect(await runRow('r1')).toEqual(before);
    expect(await timelineCount()).toBe(events.length);
    expect(Object.values(await sut.positions())).toEqual(PROJECTIONS.map(() => events.at(-1)!.globalPosition));
  });

  it('refuses an event delivered ahead of one it has not applied, writing nothing, and applies it once the gap is filled', async () => {
    const events = await appendRun('r1');
    const sut = new ProjectionWriter(db.pool, [runsProjection, runTimelineProjection]);
    await sut.apply(events[0]!);
    await expect(sut.apply(events[2]!)).rejects.toBeInstanceOf(ProjectionOutOfOrderError);
    await expect(sut.apply(events[2]!)).rejects.toMatchObject({ code: 'projection_out_of_order', missingPosition: events[1]!.globalPosition });
    expect(await runRow('r1')).toMatchObject({ state: 'queued' });
    expect(await timelineCount()).toBe(1);
    expect(await sut.positions()).toEqual({ runs: events[0]!.globalPosition, run_timeline: events[0]!.globalPosition });

    await sut.apply(events[1]!);
    await sut.apply(events[2]!);
    expect(await runRow('r1')).toMatchObject({ state: 'running', phase: 'plan' });
  });

  it('records an event it cannot decode as a gap, moves past it, and keeps it on redelivery', async () => {
    const events = await appendRun('r1');
    const sut = new ProjectionWriter(db.pool, PROJECTIONS);
    await sut.apply(events[0]!);
    const gap = { globalPosition: events[1]!.globalPosition, workspaceId: 'ws1', stream: 'run-r1', type: 'run.claimed', code: 'unsupported_schema_version', reason: 'version 9' };
    expect(await sut.recordGap(gap)).toBe('recorded');
    expect(await sut.recordGap(gap)).toBe('duplicate');
    await sut.apply(events[2]!);
    const { rows } = await db.pool.query(`SELECT global_position, workspace_id, type, code FROM projector.gaps`);
    expect(rows).toEqual([{ global_position: String(events[1]!.globalPosition), workspace_id: 'ws1', type: 'run.claimed', code: 'unsupported_schema_version' }]);
    expect(await runRow('r1')).toMatchObject({ state: 'running' });
  });

  it('catches up from the events table to a settled position, recording what it cannot decode as a gap', async () => {
    const first = await appendRun('r1');
    // Written by a newer release: a type this process has no schema for.
    await new PostgresEventStore(db.pool, { doorbellChannel: null }).append('report-x', 'no_stream', [{ type: 'report.published', schemaVersion: 1, data: {}, actor }], { workspaceId: 'ws2' });
    const events = [...first, ...(await appendRun('r2', 'ws2'))];
    const sut = new ProjectionWriter(db.pool, PROJECTIONS);
    const head = events.at(-1)!.globalPosition;
    const result = await catchUpFromStore(db.pool, registry, sut, head, { batchSize: 4 });
    expect(result).toEqual({ applied: events.length, gaps: 1, position: head });
    expect(await runRow('r2')).toMatchObject({ state: 'succeeded' });
    expect((await db.pool.query(`SELECT workspace_id, stream_id, code FROM projector.gaps`)).rows).toEqual([{ workspace_id: 'ws2', stream_id: 'report-x', code: 'unknown_event_type' }]);
    expect(Object.values(await sut.positions())).toEqual(PROJECTIONS.map(() => head));
  });

  it('creates in a shadow schema exactly the tables the migration created', async () => {
    await db.pool.query(`CREATE SCHEMA ${SHADOW_SCHEMA}`);
    for (const statement of projectionDdl(SHADOW_SCHEMA, PROJECTIONS)) await db.pool.query(statement);
    const describe = async (schema: string) =>
      (
        await db.pool.query(
          `SELECT c.table_name, c.ordinal_position, c.column_name, c.data_type, c.is_nullable FROM information_schema.columns c
            WHERE c.table_schema = $1 AND c.table_name <> 'checkpoints' AND c.table_name <> 'gaps' ORDER BY 1, 2`,
          [schema],
        )
      ).rows;
    const live = await describe(PROJECTOR_SCHEMA);
    expect(live.length).toBeGreaterThan(50);
    expect(await describe(SHADOW_SCHEMA)).toEqual(live);
  });
});

describe(rebuildProjection.name, () => {
  let db: TestDatabase;
  const registry = registerProjectorEvents(new EventRegistry());

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('rebuilds every projection from the events table into the same rows and swaps them in while reads go on', async () => {
    const store = new PostgresEventStore(db.pool, { registry, doorbellChannel: null });
    for (let i = 0; i < 5; i++) {
      await store.append(`run-r${i}`, 'no_stream', runHistory(`r${i}`).map((event) => ({ ...event, actor })), { workspaceId: `ws${i % 2}` });
    }
    await store.append('attention-att1', 'no_stream', [
      {
        type: 'attention.requested',
        data: { attentionId: 'att1', runId: 'r1', deploymentId: 'dep1', versionDigest: 'a'.repeat(64), tool: 'http_fetch', verb: 'POST', resource: null, arguments: {}, requester: actor, deadline: '2026-11-30T09:00:00.000Z' },
        actor,
      },
      { type: 'attention.approved', data: { scope: 'once', actor: { kind: 'user', id: 'u1' } }, actor },
    ], { workspaceId: 'ws1' });
    const live = new ProjectionWriter(db.pool, PROJECTIONS);
    const head = (await store.readAll({ limit: 1_000 })).at(-1)!.globalPosition;
    await catchUpFromStore(db.pool, registry, live, head);
    await db.pool.query('CREATE SCHEMA before_rebuild');
    for (const table of PROJECTIONS.flatMap((projection) => projection.tables)) {
      await db.pool.query(`CREATE TABLE before_rebuild.${table.name} AS SELECT * FROM projector.${table.name}`);
    }

    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        await db.pool.query(`SELECT count(*) FROM projector.runs`);
        reads++;
      }
    })();
    const lines: string[] = [];
    for (const projection of PROJECTIONS) {
      const result = await rebuildProjection({ pool: db.pool, registry, projection, batchSize: 7, progress: (line) => lines.push(line) });
      expect(result).toMatchObject({ projection: projection.name, source: 'events_table', position: head, swapped: true, gaps: 0 });
      const diff = await diffProjection(db.pool, projection, 'before_rebuild', PROJECTOR_SCHEMA);
      for (const table of Object.values(diff)) expect(table).toMatchObject({ onlyLeft: 0, onlyRight: 0 });
    }
    reading = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect((await db.pool.query(`SELECT count(*) AS n FROM projector.runs`)).rows[0].n).toBe('5');
    expect((await db.pool.query(`SELECT state FROM projector.attention`)).rows).toEqual([{ state: 'approved' }]);
    expect(lines.some((line) => line.startsWith('swapped the rebuilt runs in'))).toBe(true);
    expect((await db.pool.query(`SELECT count(*) AS n FROM pg_namespace WHERE nspname = $1`, [SHADOW_SCHEMA])).rows[0].n).toBe('0');

    // The live writer goes on from the same position on the rebuilt tables.
    await store.append('run-r9', 'no_stream', runHistory('r9').map((event) => ({ ...event, actor })), { workspaceId: 'ws1' });
    const next = (await store.readAll({ after: head })).map((event) => registry.decode(event));
    for (const event of next) await live.apply(event);
    expect((await db.pool.query(`SELECT state FROM projector.runs WHERE run_id = 'r9'`)).rows).toEqual([{ state: 'succeeded' }]);
  });
});
