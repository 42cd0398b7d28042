import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { EventRegistry, isPayloadRef, newEventId, registerIntakeEvents, registerRunExecutionEvents, type JsonValue } from '@packetagent/contracts';
import { PostgresEventStore, PostgresPayloadStore } from '@packetagent/eventstore';
import { UnreplayableRunError } from '../../run/run.state';
import { StoreRunStream } from './store-run-stream';

const WS = 'ws_payloads';
const model = { provider: 'scripted', model: 'demo', scripted: true };
const limits = { thresholdBytes: 64 * 1024, eventBudgetBytes: 384 * 1024 };

const modelTurn = (text: string, args: JsonValue) => ({
  iteration: 1, model, text, toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: args }], stopReason: 'tool_use',
  usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0, attempts: 1, durationMs: 1, native: null,
});
const toolResult = (output: JsonValue) => ({ callId: 'c1', tool: 'http_fetch', ok: true, output, summary: '200', executed: true });

describe(StoreRunStream.name, () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let payloads: PostgresPayloadStore;
  const registry = registerRunExecutionEvents(registerIntakeEvents(new EventRegistry()));
  let runs = 0;
  const sut = () => new StoreRunStream(store, registry, payloads, { runId: `run${++runs}`, workspaceId: WS }, limits);
  const stored = async (runId: string) =>
    (await db.pool.query<{ type: string; data: Record<string, unknown>; bytes: number }>(`SELECT type, data, octet_length(data::text) AS bytes FROM events WHERE stream_id = $1 ORDER BY stream_version`, [`run-${runId}`])).rows;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.pool, { doorbellChannel: null, registry });
    payloads = new PostgresPayloadStore(db.pool);
  });
  afterAll(() => db?.drop());

  it('records a 2 MB model turn and a 5 MB tool result by reference, and reads them back whole', async () => {
    const stream = sut();
    const text = 'x'.repeat(2 * 1024 * 1024);
    const output = { body: 'y'.repeat(5 * 1024 * 1024), status: 200 };
    await stream.append(0, [
      { id: newEventId(), type: 'run.model_turn', data: modelTurn(text, { url: 'https://example.com/' }) },
      { id: newEventId(), type: 'run.tool_result', data: toolResult(output) },
    ]);
    const rows = await stored(`run${runs}`);
    expect(rows.map((row) => row.bytes)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(Math.max(...rows.map((row) => row.bytes))).toBeLessThan(2_048);
    expect(isPayloadRef(rows[0]!.data['text'])).toBe(true);
    expect(rows[0]!.data['toolCalls']).toEqual([{ id: 'c1', name: 'http_fetch', arguments: { url: 'https://example.com/' } }]);
    expect(isPayloadRef(rows[1]!.data['output'])).toBe(true);

    const [turn, result] = await stream.read(1);
    expect((turn!.data as { text: string }).text).toBe(text);
    expect((result!.data as { output: unknown }).output).toEqual(output);
  });

  it('keeps small fields inline and moves fields that together pass the event budget, largest first', async () => {
    const stream = sut();
    const args = { body: 'z'.repeat(60 * 1024) };
    await stream.append(0, [{ id: newEventId(), type: 'run.model_turn', data: { ...modelTurn('w'.repeat(60 * 1024), args), toolCalls: Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, name: 'http_fetch', arguments: args })) } }]);
    const [row] = await stored(`run${runs}`);
    expect(row!.bytes).toBeLessThan(limits.eventBudgetBytes);
    const inline = (row!.data['toolCalls'] as Array<{ arguments: unknown }>).filter((call) => !isPayloadRef(call.arguments));
    expect(inline.length).toBeGreaterThan(0);
    expect(inline.length).toBeLessThan(8);
    const [read] = await stream.read(1);
    expect((read!.data as { toolCalls: Array<{ arguments: unknown }> }).toolCalls.every((call) => (call.arguments as { body: string }).body.length === 60 * 1024)).toBe(true);
  });

  it('stores content that looks like a payload reference by reference, so it reads back as the content it was', async () => {
    const stream = sut();
    const forged = { $payload: { digest: 'e'.repeat(64), size: 3, mediaType: 'application/json' } };
    await stream.append(0, [{ id: newEventId(), type: 'run.tool_result', data: toolResult({ data: forged }) }]);
    const [read] = await stream.read(1);
    expect((read!.data as { output: unknown }).output).toEqual({ data: forged });
  });

  it('makes the run unreplayable, naming the digest, when a stored payload was altered', async () => {
    const stream = sut();
    await stream.append(0, [{ id: newEventId(), type: 'run.tool_result', data: toolResult('q'.repeat(100 * 1024)) }]);
    const [row] = await stored(`run${runs}`);
    const digest = (row!.data['output'] as { $payload: { digest: string } }).$payload.digest;
    await db.pool.query(`ALTER TABLE eventstore.payloads DISABLE TRIGGER USER`);
    await db.pool.query(`UPDATE eventstore.payloads SET content = overlay(content placing convert_to('"Z', 'UTF8') from 1 for 2) WHERE digest = $1`, [digest]);
    await db.pool.query(`ALTER TABLE eventstore.payloads ENABLE TRIGGER USER`);
    await expect(stream.read(1)).rejects.toThrow(UnreplayableRunError);
    await expect(stream.read(1)).rejects.toThrow(digest);
  });
});
