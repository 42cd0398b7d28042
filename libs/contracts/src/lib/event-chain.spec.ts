import { computeEventDigest, newEventId, type EventEnvelope } from './envelope';
import { assertChain, ChainBrokenError, linkOf, verifyChain, type ChainBreak } from './event-chain';

const WS = 'ws_chain';
let position = 0;

/** A stream as the store writes it: versions from 1, each digest linked to the one before. */
function stream(name: string, count: number): EventEnvelope[] {
  let prevDigest: string | null = null;
  return Array.from({ length: count }, (_, index) => {
    const body = {
      id: newEventId(), type: 'run.compacted', schemaVersion: 1, stream: name, streamVersion: index + 1, workspaceId: WS,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(), causationId: null, correlationId: null, traceparent: null,
      actor: { kind: 'service' as const, id: 'supervisor' }, data: { droppedMessages: index + 1, estimatedTokens: 10 }, prevDigest,
    };
    const digest = computeEventDigest(body);
    prevDigest = digest;
    return { ...body, globalPosition: ++position, digest };
  });
}

const reasons = (breaks: readonly ChainBreak[]) => breaks.map((entry) => [entry.stream, entry.streamVersion, entry.reason]);

describe(verifyChain.name, () => {
  it('accepts unbroken streams and counts what it checked', () => {
    const sut = verifyChain([...stream('run-a', 3), ...stream('run-b', 2)]);

    expect(sut).toEqual({ ok: true, streamsChecked: 2, eventsChecked: 5, breaks: [] });
  });

  it('reports an event whose content was edited after its digest was taken, once, where it was edited', () => {
    const events = stream('run-a', 3);
    events[1] = { ...events[1]!, data: { droppedMessages: 99, estimatedTokens: 10 } };

    const sut = verifyChain(events);

    expect(sut.ok).toBe(false);
    expect(sut.breaks).toEqual([
      { stream: 'run-a', streamVersion: 2, globalPosition: events[1]!.globalPosition, reason: 'digest_mismatch', detail: 'content does not match its digest' },
    ]);
  });

  it('reports a link to anything but the previous event, even when the event was digested again', () => {
    const events = stream('run-a', 3);
    const relinked = { ...events[2]!, prevDigest: events[0]!.digest };
    events[2] = { ...relinked, digest: computeEventDigest(relinked) };

    const sut = verifyChain(events);

    expect(sut.breaks).toEqual([
      {
        stream: 'run-a',
        streamVersion: 3,
        globalPosition: events[2]!.globalPosition,
        reason: 'prev_digest_mismatch',
        detail: `links to ${events[0]!.digest}, previous is ${events[1]!.digest}`,
      },
    ]);
  });

  it('reports a removed event as a gap and a broken link at the event after it', () => {
    const events = stream('run-a', 4);
    events.splice(1, 1);

    const sut = verifyChain(events);

    expect(reasons(sut.breaks)).toEqual([
      ['run-a', 3, 'version_gap'],
      ['run-a', 3, 'prev_digest_mismatch'],
    ]);
    expect(sut.breaks[0]!.detail).toBe('expected version 2');
  });

  it('reports a stream that does not start at version 1 with nothing before it', () => {
    const events = stream('run-a', 3).slice(1);

    const sut = verifyChain([...stream('policy-a', 1), ...events]);

    expect(reasons(sut.breaks)).toEqual([
      ['run-a', 2, 'version_gap'],
      ['run-a', 2, 'prev_digest_mismatch'],
    ]);
  });

  it('takes a chain up after a known event', () => {
    const events = stream('run-a', 4);

    const sut = verifyChain(events.slice(2), linkOf(events[1]!));

    expect(sut.ok).toBe(true);
  });

  it('checks versions but not the first link when a read from the middle does not know the digest before it', () => {
    const events = stream('run-a', 4);
    const unknown = { streamVersion: 2 };

    expect(verifyChain(events.slice(2), unknown).ok).toBe(true);
    expect(reasons(verifyChain(events.slice(3), unknown).breaks)).toEqual([['run-a', 4, 'version_gap']]);
  });
});

describe(assertChain.name, () => {
  it('passes an unbroken stream', () => {
    expect(() => assertChain(stream('run-a', 3))).not.toThrow();
  });

  it('throws at the first break, naming the event and why', () => {
    const events = stream('run-a', 4);
    events[1] = { ...events[1]!, data: { droppedMessages: 99, estimatedTokens: 10 } };
    events.splice(2, 1);

    const sut = () => assertChain(events);

    expect(sut).toThrow(ChainBrokenError);
    expect(sut).toThrow(
      expect.objectContaining({
        code: 'chain_broken',
        chainBreak: expect.objectContaining({ stream: 'run-a', streamVersion: 2, reason: 'digest_mismatch' }),
        message: 'event at version 2 of run-a: content does not match its digest (digest_mismatch)',
      }),
    );
  });
});
