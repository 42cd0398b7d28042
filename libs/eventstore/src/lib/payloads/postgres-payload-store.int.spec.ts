import { createTestDatabase, type TestDatabase } from '@packetagent/testing';
import {
  canonicalJson,
  eventDigestBody,
  EventRegistry,
  payloadContent,
  payloadRef,
  registerRunExecutionEvents,
  resolvePayloadRefs,
  sha256Hex,
  type JsonValue,
  type PayloadRef,
} from '@packetagent/contracts';
import { EventTooLargeError } from '../errors';
import { PostgresEventStore } from '../event-store';
import { PayloadDigestMismatchError, PayloadNotFoundError, StoredPayloadTooLargeError } from './payload-store';
import { PostgresPayloadStore } from './postgres-payload-store';
import { verifyDigestChains } from '../verify-chain';
import { verifyPayloadReferences } from './verify-payloads';

const actor = { kind: 'service', id: 'supervisor' } as const;
const model = { provider: 'scripted', model: 'demo', scripted: true };

/** A run.model_turn whose text, native form and call arguments are what the test gives. */
function modelTurn(text: JsonValue, native: JsonValue = null, args: JsonValue = { url: 'https://example.com' }) {
  return {
    iteration: 1,
    model,
    text,
    toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: args }],
    stopReason: 'tool_use',
    usage: { inputTokens: 10, outputTokens: 10 },
    costUsd: 0,
    attempts: 1,
    durationMs: 3,
    native,
  };
}

const toolResult = (output: JsonValue) => ({ callId: 'c1', tool: 'http_fetch', ok: true, output, summary: '200 OK', executed: true });

/** Alters stored content the way only someone who can switch triggers off could. */
async function tamper(db: TestDatabase, workspaceId: string, digest: string): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query(`SET session_replication_role = replica`);
    await client.query(`UPDATE eventstore.payloads SET content = overlay(content placing '#'::bytea from 2 for 1) WHERE workspace_id = $1 AND digest = $2`, [workspaceId, digest]);
    await client.query(`SET session_replication_role = origin`);
  } finally {
    client.release();
  }
}

describe(PostgresPayloadStore.name, () => {
  let db: TestDatabase;
  let sut: PostgresPayloadStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    sut = new PostgresPayloadStore(db.pool, { maxBytes: 8 * 1024 * 1024 });
  });
  afterAll(() => db.drop());

  const rows = async (digest: string) =>
    (await db.pool.query<{ workspace_id: string; size: string; media_type: string }>(`SELECT workspace_id, size, media_type FROM eventstore.payloads WHERE digest = $1 ORDER BY workspace_id`, [digest])).rows;

  it('stores a value by its canonical JSON and answers the reference the event carries, then the same value back', async () => {
    const value = { lines: Array.from({ length: 2_000 }, (_, i) => `line ${i}: ${'x'.repeat(40)}`), z: 1, a: 'é' };

    const ref = await sut.putJson('ws_a', value);

    const content = payloadContent(value);
    expect(ref).toEqual({ $payload: { digest: content.digest, size: content.size, mediaType: 'application/json' } });
    expect(ref.$payload.digest).toBe(sha256Hex(Buffer.from(canonicalJson(value), 'utf8')));
    expect(await sut.getJson('ws_a', ref)).toEqual(value);
    expect((await sut.get('ws_a', ref.$payload.digest)).equals(content.bytes)).toBe(true);
    expect(await rows(content.digest)).toEqual([{ workspace_id: 'ws_a', size: String(content.size), media_type: 'application/json' }]);
  });

  it('stores the same content once per workspace however often it is put', async () => {
    const value = { repeated: 'y'.repeat(100_000) };

    const first = await sut.putJson('ws_a', value);
    const again = await sut.putJson('ws_a', { ...value });
    await Promise.all([sut.putJson('ws_a', value), sut.putJson('ws_a', value)]);

    expect(again).toEqual(first);
    expect(await rows(first.$payload.digest)).toHaveLength(1);
  });

  it("answers not found for another workspace's payload, and keeps each workspace's copy apart", async () => {
    const ref = await sut.putJson('ws_a', { only: 'in ws_a' });

    await expect(sut.getJson('ws_b', ref)).rejects.toBeInstanceOf(PayloadNotFoundError);
    await expect(sut.get('ws_b', ref.$payload.digest)).rejects.toMatchObject({ code: 'payload_not_found', digest: ref.$payload.digest });
    expect((await sut.check('ws_b', [ref.$payload.digest])).get(ref.$payload.digest)).toEqual({ status: 'missing' });

    await sut.putJson('ws_b', { only: 'in ws_a' });
    expect((await rows(ref.$payload.digest)).map((row) => row.workspace_id)).toEqual(['ws_a', 'ws_b']);
  });

  it('refuses to read content altered after it was stored, naming its digest, and reports it on a check', async () => {
    const ref = await sut.putJson('ws_t', { result: 'z'.repeat(70_000) });
    const { digest, size } = ref.$payload;
    await tamper(db, 'ws_t', digest);

    const error = await sut.getJson('ws_t', ref).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PayloadDigestMismatchError);
    expect(error).toMatchObject({ code: 'payload_digest_mismatch', digest, actualSize: size });
    expect((error as Error).message).toContain(digest);
    const checked = (await sut.check('ws_t', [digest])).get(digest);
    expect(checked).toEqual({ status: 'mismatch', actualDigest: expect.stringMatching(/^[0-9a-f]{64}$/), size });
    expect(checked).not.toMatchObject({ actualDigest: digest });
    expect((await sut.read('ws_t', [digest])).get(digest)).toMatchObject({ status: 'mismatch', actualDigest: (checked as { actualDigest: string }).actualDigest });
  });

  it('refuses an update of stored content while the triggers are on', async () => {
    const ref = await sut.putJson('ws_a', { immutable: true });

    await expect(db.pool.query(`UPDATE eventstore.payloads SET content = 'x'::bytea, size = 1 WHERE digest = $1`, [ref.$payload.digest])).rejects.toThrow(/immutable/);
  });

  it('refuses a payload above its limit and a bad digest or workspace before touching the database', async () => {
    const small = new PostgresPayloadStore(db.pool, { maxBytes: 1_024 });

    await expect(small.putJson('ws_a', 'x'.repeat(2_000))).rejects.toBeInstanceOf(StoredPayloadTooLargeError);
    await expect(sut.get('ws_a', 'A'.repeat(64))).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(sut.putJson('ws a', 1)).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(sut.put('ws_a', { ...payloadContent('real'), digest: '0'.repeat(64) })).rejects.toMatchObject({ code: 'validation_failed' });
  });
});

describe('events that carry payload references', () => {
  let db: TestDatabase;
  let payloads: PostgresPayloadStore;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    payloads = new PostgresPayloadStore(db.pool, { maxBytes: 16 * 1024 * 1024 });
    store = new PostgresEventStore(db.pool, { registry: registerRunExecutionEvents(new EventRegistry()), doorbellChannel: null });
  });
  afterAll(() => db.drop());

  it('appends a model turn of 600 KB and a tool result of 5 MB as small events once their fields are references', async () => {
    const longText = 't'.repeat(600_000);
    const bigOutput = { body: 'b'.repeat(5 * 1024 * 1024) };
    await expect(store.append('run-big', 'no_stream', [{ type: 'run.model_turn', data: modelTurn(longText), actor }], { workspaceId: 'ws1' })).rejects.toBeInstanceOf(EventTooLargeError);

    const text = await payloads.putJson('ws1', longText);
    const output = await payloads.putJson('ws1', bigOutput);
    const appended = await store.append(
      'run-big',
      'no_stream',
      [
        { type: 'run.model_turn', data: modelTurn(text), actor },
        { type: 'run.tool_result', data: toolResult(output), actor },
      ],
      { workspaceId: 'ws1' },
    );

    const sizes = appended.events.map((event) => Buffer.byteLength(canonicalJson(eventDigestBody(event)), 'utf8'));
    expect(Math.max(...sizes)).toBeLessThan(2_048);
    expect(output.$payload.size).toBeGreaterThan(5 * 1024 * 1024);
    const [turn, result] = await store.readStream('run-big');
    const resolved = await Promise.all(
      [turn!, result!].map(async (event) => {
        const contents = new Map<string, JsonValue>();
        for (const ref of [text, output]) contents.set(ref.$payload.digest, await payloads.getJson('ws1', ref));
        return resolvePayloadRefs(event.data, (ref) => contents.get(ref.digest));
      }),
    );
    expect(resolved).toEqual([modelTurn(longText), toolResult(bigOutput)]);
  });

  it('refuses a reference that is not the contract shape where a reference may stand', async () => {
    const wrong = { $payload: { digest: 'not-a-digest', size: 1, mediaType: 'application/json' } };

    await expect(store.append('run-wrong', 'no_stream', [{ type: 'run.model_turn', data: modelTurn(wrong as unknown as JsonValue), actor }], { workspaceId: 'ws1' })).rejects.toMatchObject({
      code: 'invalid_event',
    });
  });
});

describe(verifyPayloadReferences.name, () => {
  let db: TestDatabase;
  let payloads: PostgresPayloadStore;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    payloads = new PostgresPayloadStore(db.pool);
    store = new PostgresEventStore(db.pool, { registry: registerRunExecutionEvents(new EventRegistry()), doorbellChannel: null });
  });
  afterAll(() => db.drop());

  it('checks every reference, and reports a missing, an altered and a mis-sized payload with its digest at the event holding it', async () => {
    const intact = await payloads.putJson('ws1', { fine: 'f'.repeat(70_000) });
    const altered = await payloads.putJson('ws1', { altered: 'a'.repeat(70_000) });
    const elsewhere = await payloads.putJson('ws2', { stored: 'only in ws2' });
    const missing: PayloadRef = payloadRef({ digest: sha256Hex('never stored'), size: 12 });
    const misSized: PayloadRef = payloadRef({ digest: intact.$payload.digest, size: intact.$payload.size + 1 });
    const appended = await store.append(
      'run-v1',
      'no_stream',
      [
        { type: 'run.model_turn', data: modelTurn(intact, altered, missing), actor },
        { type: 'run.tool_result', data: toolResult(elsewhere), actor },
        { type: 'run.tool_result', data: toolResult(misSized), actor },
        { type: 'run.tool_result', data: toolResult({ plain: true }), actor },
      ],
      { workspaceId: 'ws1' },
    );
    await tamper(db, 'ws1', altered.$payload.digest);
    const [first, second, third] = appended.events;

    const sut = await verifyPayloadReferences(db.pool, payloads, { workspaceId: 'ws1', pageSize: 2 });

    expect(sut.payloadsChecked).toBe(5);
    expect(sut.breaks).toEqual([
      { stream: 'run-v1', streamVersion: 1, globalPosition: first!.globalPosition, reason: 'payload_mismatch', payloadDigest: altered.$payload.digest, detail: expect.stringContaining(`native references payload ${altered.$payload.digest}, whose stored content digests to `) },
      { stream: 'run-v1', streamVersion: 1, globalPosition: first!.globalPosition, reason: 'payload_missing', payloadDigest: missing.$payload.digest, detail: `toolCalls[0].arguments references payload ${missing.$payload.digest}, which is not stored` },
      { stream: 'run-v1', streamVersion: 2, globalPosition: second!.globalPosition, reason: 'payload_missing', payloadDigest: elsewhere.$payload.digest, detail: `output references payload ${elsewhere.$payload.digest}, which is not stored` },
      { stream: 'run-v1', streamVersion: 3, globalPosition: third!.globalPosition, reason: 'payload_mismatch', payloadDigest: intact.$payload.digest, detail: `output says payload ${intact.$payload.digest} is ${intact.$payload.size + 1} bytes, it is ${intact.$payload.size}` },
    ]);
    expect(await verifyPayloadReferences(db.pool, payloads, { workspaceId: 'ws2' })).toEqual({ payloadsChecked: 0, breaks: [] });
  });
});

describe(verifyDigestChains.name, () => {
  let db: TestDatabase;
  let payloads: PostgresPayloadStore;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    payloads = new PostgresPayloadStore(db.pool);
    store = new PostgresEventStore(db.pool, { registry: registerRunExecutionEvents(new EventRegistry()), doorbellChannel: null });
  });
  afterAll(() => db.drop());

  it('reports a stored payload altered after its event was appended with the digest, while every chain still holds', async () => {
    const output = await payloads.putJson('ws1', { log: 'q'.repeat(90_000) });
    const appended = await store.append('run-audit', 'no_stream', [{ type: 'run.tool_result', data: toolResult(output), actor }], { workspaceId: 'ws1' });
    expect(await verifyDigestChains(db.pool, { workspaceId: 'ws1' })).toMatchObject({ ok: true, eventsChecked: 1, payloadsChecked: 1, breaks: [] });

    await tamper(db, 'ws1', output.$payload.digest);
    const sut = await verifyDigestChains(db.pool, { workspaceId: 'ws1', payloads });

    expect(sut.ok).toBe(false);
    expect(sut.breaks).toEqual([
      {
        stream: 'run-audit',
        streamVersion: 1,
        globalPosition: appended.events[0]!.globalPosition,
        reason: 'payload_mismatch',
        payloadDigest: output.$payload.digest,
        detail: expect.stringContaining(`output references payload ${output.$payload.digest}, whose stored content digests to `),
      },
    ]);
  });
});
