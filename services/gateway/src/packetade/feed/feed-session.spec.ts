import type { EventEnvelope } from '@packetagent/contracts';
import { FeedSession, type FeedCloseReason, type FeedSink, type FeedSource } from './feed-session';

// A pure unit spec: the store is an array, the connection a list of what was written.

function event(position: number, stream = 'run-a'): EventEnvelope {
  return {
    id: `e${position}`, type: 'run.progress', schemaVersion: 1, stream, streamVersion: position, globalPosition: position, workspaceId: 'ws',
    occurredAt: '2026-12-01T00:00:00.000Z', causationId: null, correlationId: null, traceparent: null, actor: { kind: 'system', id: 'test' },
    data: {}, digest: '0'.repeat(64), prevDigest: null,
  };
}

class ArraySource implements FeedSource {
  settled = 0;
  reads: Array<[number, number]> = [];
  failWith: Error | null = null;
  constructor(readonly events: EventEnvelope[], readonly mine: (event: EventEnvelope) => boolean = () => true) {}
  async settledPosition() {
    return this.settled;
  }
  async read(after: number, upTo: number, limit: number) {
    this.reads.push([after, upTo]);
    if (this.failWith) throw this.failWith;
    return this.events.filter((e) => e.globalPosition > after && e.globalPosition <= upTo && this.mine(e)).slice(0, limit);
  }
}

class ListSink implements FeedSink {
  sent: number[] = [];
  ended: { reason: FeedCloseReason; cursor: number } | null = null;
  onSend: ((position: number) => void) | null = null;
  async send(event: EventEnvelope) {
    this.sent.push(event.globalPosition);
    this.onSend?.(event.globalPosition);
  }
  heartbeat(): void {
    // heartbeats carry no events
  }
  end(reason: FeedCloseReason, _detail: string | null, cursor: number) {
    this.ended = { reason, cursor };
  }
}

const idle = () => new Promise<void>((resolve) => setImmediate(resolve));
async function settleDown(): Promise<void> {
  for (let i = 0; i < 20; i++) await idle();
}

describe('FeedSession', () => {
  it('given settled events, when it starts after a cursor, then it sends the later ones in order, in pages', async () => {
    const source = new ArraySource([1, 2, 3, 4, 5, 6, 7].map((p) => event(p)));
    source.settled = 7;
    const sink = new ListSink();
    const session = new FeedSession(source, sink, { pageSize: 2, heartbeatMs: 60_000 }, () => undefined);

    await session.start(2);
    await settleDown();

    expect(sink.sent).toEqual([3, 4, 5, 6, 7]);
    expect(session.position).toBe(7);
    session.close('client_gone');
  });

  it('given events of other actors in between, when a page is short, then the cursor moves to the settled position and nothing is read twice', async () => {
    const source = new ArraySource([1, 2, 3, 4, 5].map((p) => event(p, p % 2 ? 'run-a' : 'run-b')), (e) => e.stream === 'run-a');
    source.settled = 5;
    const sink = new ListSink();
    const session = new FeedSession(source, sink, { pageSize: 10, heartbeatMs: 60_000 }, () => undefined);

    await session.start(0);
    await settleDown();
    session.wake(5);
    await settleDown();

    expect(sink.sent).toEqual([1, 3, 5]);
    expect(source.reads).toEqual([[0, 5]]);
    session.close('client_gone');
  });

  it('given a live wake-up while a page is being sent, when it drains, then it reads on to the new position without a gap or a repeat', async () => {
    const source = new ArraySource([1, 2, 3, 4, 5, 6].map((p) => event(p)));
    source.settled = 3;
    const sink = new ListSink();
    const session = new FeedSession(source, sink, { pageSize: 10, heartbeatMs: 60_000 }, () => undefined);
    sink.onSend = (position) => {
      if (position === 2) session.wake(6);
    };

    await session.start(0);
    await settleDown();

    expect(sink.sent).toEqual([1, 2, 3, 4, 5, 6]);
    expect(source.reads).toEqual([[0, 3], [3, 6]]);
    session.close('client_gone');
  });

  it('given a wake-up at or below what it has read, when it arrives, then nothing is read', async () => {
    const source = new ArraySource([event(1)]);
    source.settled = 1;
    const session = new FeedSession(source, new ListSink(), { pageSize: 10, heartbeatMs: 60_000 }, () => undefined);
    await session.start(0);
    await settleDown();
    const reads = source.reads.length;

    session.wake(1);
    await settleDown();

    expect(source.reads).toHaveLength(reads);
    session.close('client_gone');
  });

  it('given a store that fails, when it reads, then the session ends with error and the cursor it reached', async () => {
    const source = new ArraySource([event(1), event(2)]);
    source.settled = 1;
    const sink = new ListSink();
    let closed = 0;
    const session = new FeedSession(source, sink, { pageSize: 10, heartbeatMs: 60_000 }, () => closed++);
    await session.start(0);
    await settleDown();

    source.failWith = new Error('connection reset');
    session.wake(2);
    await settleDown();

    expect(sink.ended).toEqual({ reason: 'error', cursor: 1 });
    expect(session.isClosed).toBe(true);
    expect(closed).toBe(1);
  });
});
