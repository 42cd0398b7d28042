import type { EventEnvelope } from '@packetagent/contracts';
import { LiveSession, type LiveSessionOptions, type LiveSink, type LiveSource } from './live-session';

const WS = 'ws1';

function event(position: number, stream = 'run-a'): EventEnvelope {
  return {
    id: `00000000-0000-7000-8000-${String(position).padStart(12, '0')}`,
    type: 'run.model_turn',
    schemaVersion: 1,
    stream,
    streamVersion: position,
    globalPosition: position,
    workspaceId: WS,
    occurredAt: '2026-01-01T00:00:00.000Z',
    causationId: null,
    correlationId: null,
    traceparent: null,
    actor: { kind: 'system', id: 'test' },
    data: { n: position },
    digest: 'a'.repeat(64),
    prevDigest: null,
  };
}

/** The store: committed events and the relay's cursor. */
class FakeSource implements LiveSource {
  events: EventEnvelope[] = [];
  settled = 0;
  reads: Array<[number, number]> = [];
  async settledPosition(): Promise<number> {
    return this.settled;
  }
  async read(after: number, upTo: number, limit: number): Promise<EventEnvelope[]> {
    this.reads.push([after, upTo]);
    return this.events.filter((e) => e.globalPosition > after && e.globalPosition <= upTo).slice(0, limit);
  }
}

/** A client socket that can be made to stop reading. */
class FakeSink implements LiveSink {
  chunks: string[] = [];
  ended = false;
  full = false;
  private waiting: Array<() => void> = [];
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return !this.full;
  }
  drained(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  drain(): void {
    this.full = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
  end(): void {
    this.ended = true;
  }
  ids(): number[] {
    return this.chunks.flatMap((chunk) => /^id: (\d+)/.exec(chunk)?.[1] ?? []).map(Number);
  }
  text(): string {
    return this.chunks.join('');
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function build(options: Partial<LiveSessionOptions> = {}) {
  const source = new FakeSource();
  const sink = new FakeSink();
  const closed: string[] = [];
  const sut = new LiveSession(
    source,
    sink,
    { heartbeatMs: 15_000, bufferEvents: 100, catchUpPageSize: 2, replayFromStart: true, matches: (e) => e.stream === 'run-a', settleCheckMs: 1_000, ...options },
    (reason) => closed.push(reason),
  );
  return { sut, source, sink, closed };
}

describe(LiveSession.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('replays the store after Last-Event-ID up to the settled position, page by page, then forwards live events once', async () => {
    const { sut, source, sink } = build();
    source.events = [1, 2, 3, 4, 5].map((p) => event(p));
    source.settled = 5;

    await sut.start(2);
    sut.offer(event(4));
    sut.offer(event(5));
    sut.offer(event(6));
    await settle();

    expect(sink.ids()).toEqual([3, 4, 5, 6]);
    expect(source.reads).toEqual([[2, 5], [4, 5]]);
  });

  it('reads what was published before the subscription when the relay had not yet saved its cursor', async () => {
    const { sut, source, sink } = build();
    source.events = [1, 2, 3].map((p) => event(p));
    source.settled = 1;

    await sut.start(null);
    source.events.push(event(4));
    sut.offer(event(4));
    sut.offer(event(5, 'run-other'));
    sut.offer(event(6));
    await settle();

    expect(sink.ids()).toEqual([1, 2, 3, 4, 6]);
  });

  it('finds events published before the subscription on its settle check when nothing else is published', async () => {
    const { sut, source, sink } = build();
    source.events = [1, 2].map((p) => event(p));
    source.settled = 1;
    await sut.start(null);
    expect(sink.ids()).toEqual([1]);

    source.settled = 2;
    jest.advanceTimersByTime(1_000);
    await settle();

    expect(sink.ids()).toEqual([1, 2]);
  });

  it('starts a workspace stream at the settled position when the client names no event', async () => {
    const { sut, source, sink } = build({ replayFromStart: false, matches: () => true });
    source.events = [1, 2, 3].map((p) => event(p));
    source.settled = 2;

    await sut.start(null);
    sut.offer(event(3));
    await settle();

    expect(sink.ids()).toEqual([3]);
  });

  it('writes a heartbeat comment at every interval', async () => {
    const { sut, sink } = build();
    await sut.start(null);

    jest.advanceTimersByTime(30_000);

    expect(sink.chunks.filter((chunk) => chunk === ': heartbeat\n\n')).toHaveLength(2);
  });

  it('disconnects a client that stopped reading once its buffer is full, saying why and where to resume', async () => {
    const { sut, source, sink, closed } = build({ bufferEvents: 3 });
    source.settled = 1;
    source.events = [event(1)];
    await sut.start(0);
    sut.offer(event(2));
    await settle();
    sink.full = true;
    sut.offer(event(3));
    await settle();

    for (const p of [4, 5, 6, 7]) sut.offer(event(p));

    expect(closed).toEqual(['slow_consumer']);
    expect(sink.ended).toBe(true);
    const last = sink.chunks[sink.chunks.length - 1]!;
    expect(last).toMatch(/^event: closing\ndata: /);
    expect(JSON.parse(last.split('data: ')[1]!)).toEqual(expect.objectContaining({ reason: 'slow_consumer', lastEventId: '3' }));
  });

  it('keeps a client that catches up before its buffer fills', async () => {
    const { sut, source, sink, closed } = build({ bufferEvents: 3 });
    await sut.start(0);
    source.events = [event(1)];
    sut.offer(event(1));
    await settle();
    sink.full = true;
    sut.offer(event(2));
    await settle();
    sut.offer(event(3));
    sink.drain();
    await settle();
    sut.offer(event(4));
    await settle();

    expect(closed).toEqual([]);
    expect(sink.ids()).toEqual([1, 2, 3, 4]);
  });

  it('stops writing when the client leaves', async () => {
    const { sut, sink, closed } = build();
    await sut.start(0);

    sut.close('client_gone');
    sut.offer(event(1));
    jest.advanceTimersByTime(60_000);
    await settle();

    expect(closed).toEqual(['client_gone']);
    expect(sink.ids()).toEqual([]);
    expect(sink.text()).not.toContain('heartbeat');
  });
});
