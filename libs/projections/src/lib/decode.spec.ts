import { EventRegistry, registerIntakeEvents } from '@packetagent/contracts';
import { decodeForProjection } from './decode';

const envelope = {
  id: '01939f2c-0000-7000-8000-000000000001',
  type: 'worker.created',
  schemaVersion: 1,
  stream: 'worker-w1',
  streamVersion: 1,
  globalPosition: 7,
  workspaceId: 'ws1',
  occurredAt: '2026-11-30T08:00:00.000Z',
  causationId: null,
  correlationId: null,
  traceparent: null,
  actor: { kind: 'user', id: 'u1' },
  data: { workerId: 'w1', name: 'reporter', description: '' },
  digest: 'a'.repeat(64),
  prevDigest: null,
};

describe(decodeForProjection.name, () => {
  const sut = (body: unknown, hints = {}) => decodeForProjection(registerIntakeEvents(new EventRegistry()), () => body, hints);

  it('decodes a known event', () => {
    expect(sut(envelope)).toMatchObject({ kind: 'event', event: { type: 'worker.created', globalPosition: 7 } });
  });

  it('describes an unknown type as a gap at its position', () => {
    expect(sut({ ...envelope, type: 'worker.renamed' })).toEqual({
      kind: 'gap',
      gap: { globalPosition: 7, workspaceId: 'ws1', stream: 'worker-w1', type: 'worker.renamed', code: 'unknown_event_type', reason: expect.stringContaining('worker.renamed') },
    });
  });

  it('describes a newer schema version as a gap', () => {
    expect(sut({ ...envelope, schemaVersion: 2 })).toMatchObject({ kind: 'gap', gap: { code: 'unsupported_schema_version', globalPosition: 7 } });
  });

  it('falls back to the transport hints when the body is not JSON', () => {
    const gap = decodeForProjection(new EventRegistry(), () => JSON.parse('{nope'), { globalPosition: 9, workspaceId: 'ws2', type: 'run.started' });
    expect(gap).toMatchObject({ kind: 'gap', gap: { globalPosition: 9, workspaceId: 'ws2', type: 'run.started', code: 'malformed_json', stream: null } });
  });
});
