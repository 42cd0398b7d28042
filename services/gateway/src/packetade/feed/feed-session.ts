import type { EventEnvelope } from '@packetagent/contracts';

/** Where a feed session reads: the store, filtered to one actor's events, up to settled positions. */
export interface FeedSource {
  settledPosition(): Promise<number>;
  read(after: number, upTo: number, limit: number): Promise<EventEnvelope[]>;
}

/** The client's connection: SSE or a gRPC stream. */
export interface FeedSink {
  /** Resolves once the event is written or queued within the connection's limits. */
  send(event: EventEnvelope): Promise<void>;
  heartbeat(): void;
  end(reason: FeedCloseReason, detail: string | null, cursor: number): void;
}

export type FeedCloseReason = 'client_gone' | 'shutting_down' | 'error';

export interface FeedSessionOptions {
  pageSize: number;
  heartbeatMs: number;
}

/**
 * One client following an actor's feed from a cursor. Every event is read from the store, never
 * forwarded from NATS: a live event on the workspace's subjects only says "the store is settled
 * up to here" (the relay publishes in position order once every lower position is settled), and
 * the session reads what it has not sent up to the highest such position. A heartbeat also
 * re-reads the relay's cursor, so a lost wake-up delays an event by one heartbeat at most. Each
 * event is sent once, in position order: nothing below the cursor is read again.
 */
export class FeedSession {
  private cursor = 0;
  private target = 0;
  private pumping: Promise<void> | null = null;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly source: FeedSource,
    private readonly sink: FeedSink,
    private readonly options: FeedSessionOptions,
    private readonly onClosed: () => void,
  ) {}

  get position(): number {
    return this.cursor;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async start(after: number): Promise<void> {
    this.cursor = after;
    this.target = after;
    this.timer = setInterval(() => this.tick(), this.options.heartbeatMs);
    this.timer.unref();
    await this.settle();
  }

  /** A live event at `position` was published: the store is settled up to it. */
  wake(position: number): void {
    if (this.closed || position <= this.target) return;
    this.target = position;
    this.pump();
  }

  close(reason: FeedCloseReason, detail: string | null = null): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.sink.end(reason, detail, this.cursor);
    this.onClosed();
  }

  private tick(): void {
    if (this.closed) return;
    this.sink.heartbeat();
    void this.settle();
  }

  private async settle(): Promise<void> {
    try {
      this.wake(await this.source.settledPosition());
      await this.pumping;
    } catch (error) {
      this.fail(error);
    }
  }

  private pump(): void {
    if (this.pumping) return;
    this.pumping = this.drain()
      .catch((error: unknown) => this.fail(error))
      .finally(() => {
        this.pumping = null;
        if (!this.closed && this.cursor < this.target) this.pump();
      });
  }

  private async drain(): Promise<void> {
    while (!this.closed && this.cursor < this.target) {
      const upTo = this.target;
      const page = await this.source.read(this.cursor, upTo, this.options.pageSize);
      for (const event of page) {
        if (this.closed) return;
        await this.sink.send(event);
        this.cursor = event.globalPosition;
      }
      if (page.length < this.options.pageSize) this.cursor = Math.max(this.cursor, upTo);
    }
  }

  private fail(error: unknown): void {
    this.close('error', error instanceof Error ? 'the feed could not be read; reconnect from your last cursor' : String(error));
  }
}
