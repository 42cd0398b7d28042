import { RunModelTurnV1, RunToolResultV1 } from '../execution/run.events.v1';
import { canonicalJson, sha256Hex, type JsonValue } from '../json';
import { collectPayloadRefs, isPayloadRef, parsePayload, payloadContent, payloadMatches, payloadRef, resolvePayloadRefs, type PayloadRef } from './payload-ref';

const turn = {
  iteration: 1,
  model: { provider: 'scripted', model: 'demo', scripted: true },
  text: 'thinking',
  toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: { url: 'https://example.com' } }],
  stopReason: 'tool_use',
  usage: { inputTokens: 1, outputTokens: 1 },
  costUsd: 0,
  attempts: 1,
  durationMs: 1,
  native: { role: 'assistant' },
};

describe(payloadContent.name, () => {
  it('stores the canonical JSON of the value as UTF-8 and digests those bytes', () => {
    const value = { b: 'é', a: [1, 2.5, null] };

    const sut = payloadContent(value);

    expect(sut.bytes.toString('utf8')).toBe('{"a":[1,2.5,null],"b":"é"}');
    expect(sut.size).toBe(Buffer.byteLength(canonicalJson(value), 'utf8'));
    expect(sut.digest).toBe(sha256Hex(Buffer.from(canonicalJson(value), 'utf8')));
  });

  it('gives the same content for the same value whatever the key order', () => {
    expect(payloadContent({ a: 1, b: { c: 2, d: 3 } }).digest).toBe(payloadContent({ b: { d: 3, c: 2 }, a: 1 }).digest);
  });

  it('refuses a value that is not plain JSON, naming where', () => {
    expect(() => payloadContent({ a: [1, Number.NaN] } as unknown as JsonValue)).toThrow(/a\[1\]: number is not finite/);
  });

  it('round-trips: the parsed content is the value, and the bytes match their reference', () => {
    const value = { text: 'x'.repeat(70_000), nested: [{ n: 1e21 }] };
    const sut = payloadContent(value);

    expect(parsePayload(sut.bytes)).toEqual(value);
    expect(payloadMatches(sut.bytes, sut)).toBe(true);
    expect(payloadMatches(Buffer.concat([sut.bytes.subarray(0, -1), Buffer.from(' ')]), sut)).toBe(false);
    expect(payloadMatches(sut.bytes, { ...sut, size: sut.size + 1 })).toBe(false);
  });
});

describe(isPayloadRef.name, () => {
  const ref = payloadRef({ digest: 'a'.repeat(64), size: 600_802 });

  it('accepts exactly the contract shape', () => {
    expect(ref).toEqual({ $payload: { digest: 'a'.repeat(64), size: 600_802, mediaType: 'application/json' } });
    expect(isPayloadRef(ref)).toBe(true);
  });

  it('takes any other object for plain data', () => {
    for (const other of [
      { $payload: { digest: 'A'.repeat(64), size: 1, mediaType: 'application/json' } },
      { $payload: { digest: 'a'.repeat(64), size: -1, mediaType: 'application/json' } },
      { $payload: { digest: 'a'.repeat(64), size: 1, mediaType: 'text/plain' } },
      { $payload: { digest: 'a'.repeat(64), size: 1, mediaType: 'application/json', extra: true } },
      { ...ref, other: 1 },
      [ref],
      'string',
      null,
    ]) {
      expect(isPayloadRef(other)).toBe(false);
    }
  });
});

describe(resolvePayloadRefs.name, () => {
  const big = { rows: Array.from({ length: 3 }, (_, i) => ({ i })) };
  const stored = new Map<string, JsonValue>();
  const refTo = (value: JsonValue): PayloadRef => {
    const content = payloadContent(value);
    stored.set(content.digest, value);
    return payloadRef(content);
  };

  it('finds references anywhere in the data with their paths, and replaces each with its content', () => {
    const data = { ...turn, text: refTo('long text'), toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: refTo(big) }], native: refTo({ raw: true }) };

    const found = collectPayloadRefs(data);
    const sut = resolvePayloadRefs(data as unknown as JsonValue, (ref) => stored.get(ref.digest));

    expect(found.map((entry) => entry.path)).toEqual(['text', 'toolCalls[0].arguments', 'native']);
    expect(found[1]!.ref).toEqual({ digest: payloadContent(big).digest, size: payloadContent(big).size, mediaType: 'application/json' });
    expect(sut).toEqual({ ...turn, text: 'long text', toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: big }], native: { raw: true } });
    expect(isPayloadRef(data.text)).toBe(true);
  });

  it('leaves a reference in place when the lookup has nothing for it', () => {
    const data = { output: refTo('kept'), other: refTo('resolved') };

    const sut = resolvePayloadRefs(data, (ref, path) => (path === 'other' ? stored.get(ref.digest) : undefined));

    expect(sut).toEqual({ output: data.output, other: 'resolved' });
  });

  it('resolves the value itself when it is a reference, and never looks inside resolved content', () => {
    const inner = refTo('never');
    const outer = refTo({ looksLike: inner });
    const lookups: string[] = [];

    const sut = resolvePayloadRefs(outer, (ref, path) => {
      lookups.push(path);
      return stored.get(ref.digest);
    });

    expect(sut).toEqual({ looksLike: inner });
    expect(lookups).toEqual(['']);
  });

  it('keeps a __proto__ key an ordinary key', () => {
    const data = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as JsonValue;

    const sut = resolvePayloadRefs(data, () => undefined) as Record<string, unknown>;

    expect(Object.getPrototypeOf(sut)).toBe(Object.prototype);
    expect(Object.keys(sut)).toEqual(['__proto__', 'x']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('run event schemas with references', () => {
  const ref = payloadRef({ digest: 'b'.repeat(64), size: 600_802 });

  it('accept a reference for text, native and each call argument, and their current shapes as before', () => {
    expect(RunModelTurnV1.safeParse(turn).success).toBe(true);
    expect(RunModelTurnV1.safeParse({ ...turn, text: ref, native: ref, toolCalls: [{ id: 'c1', name: 'x', arguments: ref }, { id: 'c2', name: 'y', arguments: null }] }).success).toBe(true);
    expect(RunModelTurnV1.safeParse({ ...turn, text: 5 }).success).toBe(false);
    expect(RunModelTurnV1.safeParse({ ...turn, text: { $payload: { digest: 'short', size: 1, mediaType: 'application/json' } } }).success).toBe(false);
  });

  it('accept a reference for a tool result output', () => {
    const result = { callId: 'c1', tool: 'http_fetch', ok: true, output: ref, summary: '200 OK', executed: true };
    expect(RunToolResultV1.safeParse(result).success).toBe(true);
    expect(RunToolResultV1.safeParse({ ...result, output: { body: 'small' } }).success).toBe(true);
  });
});
