import { z } from 'zod';
import { computeEventDigest, newEventId, parseEnvelope, type EventEnvelope } from './envelope';
import { EventRegistry, EventSchemaMismatchError, UnknownEventTypeError, UnsupportedSchemaVersionError } from './registry';

function envelope(type: string, schemaVersion: number, data: EventEnvelope['data']): EventEnvelope {
  const body = {
    id: newEventId(), type, schemaVersion, stream: 'run-1', streamVersion: 1, workspaceId: 'ws1',
    occurredAt: '2026-11-30T10:00:00.000Z', causationId: null, correlationId: null, traceparent: null,
    actor: { kind: 'system' as const, id: 'test' }, data, prevDigest: null,
  };
  return { ...body, globalPosition: 1, digest: computeEventDigest(body) };
}

describe(EventRegistry.name, () => {
  const sut = new EventRegistry()
    .register('run.started', 1, z.object({ input: z.string() }))
    .register('run.started', 2, z.object({ input: z.string(), attempt: z.number().int() }), (v1: { input: string }) => ({ ...v1, attempt: 1 }))
    .register('run.started', 3, z.object({ input: z.string(), attempts: z.array(z.number()) }), (v2: { input: string; attempt: number }) => ({ input: v2.input, attempts: [v2.attempt] }));

  it('upcasts an old version step by step to the latest', () => {
    const decoded = sut.decode(envelope('run.started', 1, { input: 'x' }));
    expect(decoded).toMatchObject({ schemaVersion: 3, storedSchemaVersion: 1, data: { input: 'x', attempts: [1] } });
  });

  it('registers first versions once, keeping what another module registered', () => {
    const shared = new EventRegistry().register('thing.made', 1, z.object({ id: z.string() }));
    const sut = shared.registerFirstVersions({ 'thing.made': z.object({ other: z.number() }), 'thing.gone': z.object({}) });

    expect(sut.latestVersion('thing.made')).toBe(1);
    expect(sut.latestVersion('thing.gone')).toBe(1);
    expect(sut.validateForAppend('thing.made', { id: 'a' }).data).toEqual({ id: 'a' });
    expect(() => sut.registerFirstVersions({ 'thing.gone': z.object({}) })).not.toThrow();
  });

  it('throws a typed error for an unknown type', () => {
    expect(() => sut.decode(envelope('run.vanished', 1, {}))).toThrow(UnknownEventTypeError);
  });

  it('throws a typed error for a version newer than it knows, naming both', () => {
    const error = (() => {
      try {
        sut.decode(envelope('run.started', 4, { input: 'x' }));
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(UnsupportedSchemaVersionError);
    expect(error).toMatchObject({ code: 'unsupported_schema_version', schemaVersion: 4, latestKnown: 3 });
  });

  it('never coerces data that does not match its schema', () => {
    expect(() => sut.decode(envelope('run.started', 2, { input: 'x', attempt: '1' }))).toThrow(EventSchemaMismatchError);
  });

  it('validates new events at the latest version', () => {
    expect(sut.validateForAppend('run.started', { input: 'x', attempts: [] })).toEqual({ schemaVersion: 3, data: { input: 'x', attempts: [] } });
    expect(() => sut.validateForAppend('run.started', { input: 'x' })).toThrow(EventSchemaMismatchError);
  });

  it('refuses to register versions out of order or without an upcaster', () => {
    expect(() => new EventRegistry().register('a.b', 2, z.object({}))).toThrow(/register version 1 before 2/);
    expect(() => new EventRegistry().register('a.b', 1, z.object({})).register('a.b', 2, z.object({}))).toThrow(/needs an upcaster/);
  });
});

describe(parseEnvelope.name, () => {
  it('accepts a well-formed envelope', () => {
    const event = envelope('run.started', 1, { input: 'x' });
    expect(parseEnvelope(JSON.parse(JSON.stringify(event)))).toEqual(event);
  });

  it('names what is wrong with a malformed one', () => {
    expect(() => parseEnvelope({ ...envelope('run.started', 1, {}), stream: 'no category', digest: 'x' })).toThrow(/stream.*digest|digest.*stream/s);
  });
});

describe(computeEventDigest.name, () => {
  it('changes when any digested field changes, and not with key order', () => {
    const event = envelope('run.started', 1, { a: 1, b: 2 });
    const same = computeEventDigest({ ...event, data: { b: 2, a: 1 } });
    expect(same).toBe(event.digest);
    expect(computeEventDigest({ ...event, data: { a: 1, b: 3 } })).not.toBe(event.digest);
    expect(computeEventDigest({ ...event, actor: { kind: 'user', id: 'test' } })).not.toBe(event.digest);
  });
});
