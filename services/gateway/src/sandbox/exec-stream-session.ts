import type { ExecLiveMessage, ExecRecord, ExecResult } from '@packetagent/contracts';
import type { LiveSink } from '../live/live-session';

export type ExecStreamCloseReason = 'ended' | 'client_gone' | 'shutting_down' | 'error';

export interface ExecStreamOptions {
  heartbeatMs: number;
  /** The exec's record as stored now; null when it cannot be read this time. */
  reread(): Promise<ExecRecord | null>;
}

/**
 * One SSE connection following one exec: `started`, then `output` as the sandbox publishes it,
 * then `ended` with the result, after which the server closes the stream. An exec that has
 * already ended gets its `ended` event alone. The record is read again at every heartbeat, so a
 * lost `ended` message or a replica that died mid-exec does not leave the client waiting forever.
 *
 * Nothing is held back for a slow client: the sandbox bounds live text to 1 MiB per stream, so
 * what waits in the socket's buffer is bounded too.
 */
export class ExecStreamSession {
  private closed = false;
  private startedSent = false;
  private rereading = false;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly sink: LiveSink,
    private readonly options: ExecStreamOptions,
    private readonly onClosed: (reason: ExecStreamCloseReason) => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Starts from the record read after subscribing; `early` is what the subscription delivered meanwhile. */
  start(record: ExecRecord, early: readonly ExecLiveMessage[] = []): void {
    if (this.closed) return;
    this.sink.write(': connected\n\n');
    if (record.result) {
      this.end(record.result);
      return;
    }
    this.send('started', { execId: record.execId, argv: record.argv, driver: record.driver, startedAt: record.startedAt });
    this.startedSent = true;
    this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
    this.heartbeat.unref();
    for (const message of early) this.offer(message);
  }

  offer(message: ExecLiveMessage): void {
    if (this.closed) return;
    switch (message.kind) {
      case 'started':
        // The record already said it started; a second `started` would tell the client nothing.
        if (!this.startedSent) {
          this.send('started', { execId: message.execId, argv: message.argv, driver: message.driver, startedAt: null });
          this.startedSent = true;
        }
        return;
      case 'output':
        this.send('output', { stream: message.stream, text: message.text });
        return;
      case 'ended':
        this.end(message.result);
        return;
    }
  }

  /** Ends the stream; a reason other than the exec's end or the client leaving is told in a last `closing` event. */
  close(reason: ExecStreamCloseReason, detail?: string): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (reason === 'shutting_down' || reason === 'error') this.send('closing', { reason, detail: detail ?? null }, true);
    this.sink.end();
    this.onClosed(reason);
  }

  private end(result: ExecResult): void {
    this.send('ended', { result });
    this.close('ended');
  }

  private send(event: string, data: unknown, evenIfClosed = false): void {
    if (this.closed && !evenIfClosed) return;
    this.sink.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private beat(): void {
    if (this.closed) return;
    this.sink.write(': heartbeat\n\n');
    if (this.rereading) return;
    this.rereading = true;
    this.options
      .reread()
      .then((record) => {
        if (record?.result) this.end(record.result);
      })
      .catch(() => undefined)
      .finally(() => {
        this.rereading = false;
      });
  }
}
