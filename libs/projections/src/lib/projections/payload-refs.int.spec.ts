import { EventRegistry, type DecodedEvent, type JsonValue } from '@packetagent/contracts';
import { PostgresEventStore, PostgresPayloadStore } from '@packetagent/eventstore';
import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { ProjectionWriter } from '../applier';
import { PROJECTIONS } from '../catalog';
import { registerProjectorEvents } from '../registry';
import { runHistory } from '../testing/run-history';

const actor = { kind: 'service', id: 'supervisor' } as const;

describe('projections of events with payload references', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let payloads: PostgresPayloadStore;
  const registry = registerProjectorEvents(new EventRegistry());

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { registry, doorbellChannel: null });
    payloads = new PostgresPayloadStore(db.pool);
  });
  afterAll(() => db.drop());

  it('project a run whose model text, native turn, call arguments and tool output are references, recording each size and digest', async () => {
    const text = await payloads.putJson('ws1', 'm'.repeat(600_000));
    const native = await payloads.putJson('ws1', { content: [{ type: 'text', text: 'n'.repeat(70_000) }] });
    const args = await payloads.putJson('ws1', { body: 'a'.repeat(70_000) });
    const output = await payloads.putJson('ws1', { body: 'o'.repeat(5 * 1024 * 1024) });
    const history = runHistory('rp').map((event) => {
      const data = event.data as Record<string, JsonValue>;
      if (event.type === 'run.model_turn') {
        const calls = data['toolCalls'] as Array<Record<string, JsonValue>>;
        return { ...event, data: { ...data, text, native, toolCalls: calls.map((call) => ({ ...call, arguments: args })) } };
      }
      return event.type === 'run.tool_result' ? { ...event, data: { ...data, output } } : event;
    });
    await store.append('run-rp', 'no_stream', history.map((event) => ({ ...event, actor })), { workspaceId: 'ws1' });
    const events: DecodedEvent[] = (await store.readStream('run-rp')).map((event) => registry.decode(event));
    const sut = new ProjectionWriter(db.pool, PROJECTIONS);

    for (const event of events) expect(Object.values(await sut.apply(event)).every((outcome) => outcome === 'applied')).toBe(true);

    const run = (await db.pool.query(`SELECT state, iteration, tool_calls, cost_usd FROM projector.runs WHERE run_id = 'rp'`)).rows[0];
    expect(run).toEqual({ state: 'succeeded', iteration: 1, tool_calls: 1, cost_usd: 0.25 });
    const timeline = (await db.pool.query<{ type: string; summary: Record<string, unknown> }>(`SELECT type, summary FROM projector.run_timeline WHERE run_id = 'rp' ORDER BY stream_version`)).rows;
    const turn = timeline.find((row) => row.type === 'run.model_turn')!.summary;
    expect(turn).toMatchObject({ iteration: 1, toolCalls: ['http_fetch'] });
    expect(turn['payloads']).toEqual([
      { path: 'text', size: text.$payload.size, digest: text.$payload.digest },
      { path: 'toolCalls[0].arguments', size: args.$payload.size, digest: args.$payload.digest },
      { path: 'native', size: native.$payload.size, digest: native.$payload.digest },
    ]);
    expect(timeline.find((row) => row.type === 'run.tool_result')!.summary).toEqual({
      callId: 'c1',
      tool: 'http_fetch',
      ok: true,
      executed: true,
      summary: '200 OK',
      payloads: [{ path: 'output', size: output.$payload.size, digest: output.$payload.digest }],
    });
    expect(timeline.filter((row) => row.summary['payloads'] !== undefined)).toHaveLength(2);
    const stored = await db.pool.query<{ bytes: number }>(`SELECT max(octet_length(summary::text)) AS bytes FROM projector.run_timeline WHERE run_id = 'rp'`);
    expect(Number(stored.rows[0]!.bytes)).toBeLessThan(1_024);
  });
});
