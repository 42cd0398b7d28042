import type { NatsConnection } from '@nats-io/transport-node';
import { execLiveSubject, type ExecLiveMessage, type ExecResult, type ExecDriverName } from '@packetagent/contracts';

/** Text per stream shown live; past it the live view says so and the whole output stays retrievable. */
const LIVE_BYTES_PER_STREAM = 1024 * 1024;
const FLUSH_BYTES = 16 * 1024;
const FLUSH_MS = 100;

type Stream = 'stdout' | 'stderr';

/**
 * An exec's output published live on core NATS while it runs, coalesced into a message per
 * 100 ms or 16 KiB. Lossy by design: nobody may rely on it for the record.
 */
export class LiveOutput {
  private seq = 0;
  private readonly buffered: Record<Stream, string> = { stdout: '', stderr: '' };
  private readonly sent: Record<Stream, number> = { stdout: 0, stderr: 0 };
  private timer: NodeJS.Timeout | null = null;
  private readonly subject: string;

  constructor(
    private readonly nc: NatsConnection | null,
    prefix: string,
    workspaceId: string,
    private readonly execId: string,
  ) {
    this.subject = execLiveSubject(prefix, workspaceId, execId);
  }

  started(argv: readonly string[], driver: ExecDriverName): void {
    this.publish({ kind: 'started', execId: this.execId, seq: this.seq++, argv: [...argv], driver });
  }

  output(stream: Stream, text: string): void {
    const room = LIVE_BYTES_PER_STREAM - this.sent[stream];
    if (room <= 0) return;
    const part = text.length > room ? `${text.slice(0, room)}\n[live output cut at ${LIVE_BYTES_PER_STREAM} characters; the whole output is kept with the result]\n` : text;
    this.sent[stream] += part.length;
    this.buffered[stream] += part;
    if (this.buffered[stream].length >= FLUSH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  ended(result: ExecResult): void {
    this.flush();
    this.publish({ kind: 'ended', execId: this.execId, seq: this.seq++, result });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const stream of ['stdout', 'stderr'] as const) {
      if (!this.buffered[stream]) continue;
      this.publish({ kind: 'output', execId: this.execId, seq: this.seq++, stream, text: this.buffered[stream] });
      this.buffered[stream] = '';
    }
  }

  private publish(message: ExecLiveMessage): void {
    if (!this.nc || this.nc.isClosed()) return;
    try {
      this.nc.publish(this.subject, JSON.stringify(message));
    } catch {
      // Live output is best effort; the result carries the record.
    }
  }
}
