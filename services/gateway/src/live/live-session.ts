import type { EventEnvelope } from '@packetagent/contracts';

/** Where a session reads what it must replay. */
export interface LiveSource {
  /** A position at or below which every event is committed or will never be (the relay's cursor). */
  settledPosition(): Promise<number>;
  /** The session's events in (after, upTo], in position order, at most `limit`. */
  read(after: number, upTo: number, limit: number): Promise<EventEnvelope[]>;
}

/** The client connection. */
export interface LiveSink {
  /** False when the chunk was queued above the socket's high-water mark. */
  write(chunk: string): boolean;
  /** Resolves when the socket has drained, or the connection has gone. */
  drained(): Promise<void>;
  end(): void;
}

export interface LiveSessionOptions {
  heartbeatMs: number;
  bufferEvents: number;
  catchUpPageSize: number;
  /** Whether an event from the subscription belongs to this session (a run's stream, or all of the workspace). */
  matches(event: EventEnvelope): boolean;
  /** With no Last-Event-ID: replay from the first event (a run), or only what comes next (a workspace). */
  replayFromStart: boolean;
  /** After this delay the settled position is read once more, closing the window in which the relay has published but not yet saved its cursor. */
  settleCheckMs?: number;
}

export type CloseReason = 'slow_consumer' | 'shutting_down' | 'error';

/**
 * One SSE connection. The caller subscribes to live events before `start`, which replays the
 * store from the client's Last-Event-ID up to the settled position; live events wait in a
 * bounded buffer meanwhile. The relay publishes in position order and only once every lower
 * position is settled, so the first live event certifies the store up to its position (the
 * session reads what it has not seen below it), and every later one follows it with nothing
 * in between. Positions at or below the last one certified are dropped: nothing is sent twice.
 */
export class LiveSession {
  private certified = 0;
  private contiguous = false;
  private readonly pending: EventEnvelope[] = [];
  private pumping = false;
  private work: Promise<void> = Promise.resolve();
  private closed = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private settleCheck: NodeJS.Timeout | null = null;
  private sent = 0;

  constructor(
    private readonly source: LiveSource,
    private readonly sink: LiveSink,
    private readonly options: LiveSessionOptions,
    private readonly onClosed: (reason: CloseReason | 'client_gone', error?: unknown) => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Events written so far. */
  get eventsSent(): number {
    return this.sent;
  }

  start(lastEventId: number | null): Promise<void> {
    this.certified = lastEventId ?? 0;
    this.sink.write(`retry: 2000\n: connected\n\n`);
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
    this.settleCheck = setTimeout(() => this.enqueue(() => this.catchUpToSettled()), this.options.settleCheckMs ?? 1_000);
    this.settleCheck.unref();
    return this.enqueue(async () => {
      if (lastEventId === null && !this.options.replayFromStart) {
        this.certified = Math.max(this.certified, await this.source.settledPosition());
        return;
      }
      await this.catchUpToSettled();
    });
  }

  /** A live event from the subscription. */
  offer(event: EventEnvelope): void {
    if (this.closed || (this.contiguous && event.globalPosition <= this.certified)) return;
    this.pending.push(event);
    if (this.pending.length > this.options.bufferEvents) {
      this.close('slow_consumer', `more than ${this.options.bufferEvents} events waited for the client; reconnect with Last-Event-ID to resume`);
      return;
    }
    if (!this.pumping) {
      this.pumping = true;
      this.enqueue(() => this.pump());
    }
  }

  /** Ends the stream; with a reason the client is told why in a last `closing` event. */
  close(reason: CloseReason | 'client_gone', detail?: string, error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.settleCheck) clearTimeout(this.settleCheck);
    this.pending.length = 0;
    if (reason !== 'client_gone') {
      const lastEventId = this.certified > 0 ? String(this.certified) : null;
      this.sink.write(`event: closing\ndata: ${JSON.stringify({ reason, detail: detail ?? null, lastEventId })}\n\n`);
    }
    this.sink.end();
    this.onClosed(reason, error);
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    this.work = this.work
      .then(() => (this.closed ? undefined : task()))
      .catch((error: unknown) => this.close('error', 'the stream failed; reconnect with Last-Event-ID to resume', error));
    return this.work;
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed && this.pending.length > 0) {
        const event = this.pending.shift()!;
        if (event.globalPosition <= this.certified) {
          // Published after the subscription began: whatever follows arrives live.
          this.contiguous = true;
          continue;
        }
        if (!this.contiguous) {
          // Anything below it that was published before the subscription is in the store.
          await this.replay(this.certified, event.globalPosition);
          this.contiguous = true;
          continue;
        }
        this.certified = event.globalPosition;
        if (this.options.matches(event)) await this.send(event);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async catchUpToSettled(): Promise<void> {
    if (this.contiguous) return;
    const settled = await this.source.settledPosition();
    if (settled > this.certified) await this.replay(this.certified, settled);
  }

  private async replay(after: number, upTo: number): Promise<void> {
    let from = after;
    for (;;) {
      const page = await this.source.read(from, upTo, this.options.catchUpPageSize);
      for (const event of page) {
        if (this.closed) return;
        await this.send(event);
      }
      if (page.length < this.options.catchUpPageSize) break;
      from = page[page.length - 1]!.globalPosition;
    }
    this.certified = Math.max(this.certified, upTo);
  }

  private async send(event: EventEnvelope): Promise<void> {
    this.sent++;
    if (!this.sink.write(`id: ${event.globalPosition}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)) await this.sink.drained();
  }

  private beat(): void {
    if (this.closed) return;
    this.sink.write(': heartbeat\n\n');
    if (!this.contiguous) this.enqueue(() => this.catchUpToSettled());
  }
}
