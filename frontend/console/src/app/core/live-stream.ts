import { toProblem, type Problem } from '../shared/problem';
import { SseParser, type SseMessage } from '../shared/sse';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'unavailable' | 'closed';

export interface LiveStreamOptions {
  url: string;
  lastEventId: string | null;
  onMessage(message: SseMessage): void;
  onStatus(status: LiveStatus, problem?: Problem): void;
}

/**
 * Server-sent events over fetch rather than EventSource: the status of a refused connection
 * is visible (a 404 means the server has no stream, so stop; EventSource would retry blindly
 * or fail without saying why), and Last-Event-ID goes as a header on every reconnect.
 */
export class LiveStream {
  private readonly abort = new AbortController();
  private lastEventId: string | null;
  private stopped = false;

  constructor(private readonly options: LiveStreamOptions) {
    this.lastEventId = options.lastEventId;
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.options.onStatus('closed');
  }

  private async loop(): Promise<void> {
    let backoffMs = 1_000;
    this.options.onStatus('connecting');
    while (!this.stopped) {
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        if (this.lastEventId) headers['last-event-id'] = this.lastEventId;
        const response = await fetch(this.options.url, { headers, credentials: 'same-origin', signal: this.abort.signal, cache: 'no-store' });
        if (!response.ok || !response.body) {
          const body: unknown = await response.json().catch(() => null);
          // 4xx will not change by retrying: the stream does not exist here or is not ours.
          if (response.status >= 400 && response.status < 500 && response.status !== 429) {
            this.options.onStatus('unavailable', toProblem(response.status, body, response.statusText));
            return;
          }
          throw new Error(`HTTP ${response.status}`);
        }
        this.options.onStatus('live');
        backoffMs = 1_000;
        const parser = new SseParser();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const message of parser.push(value)) {
            if (message.id !== null) this.lastEventId = message.id;
            this.options.onMessage(message);
          }
        }
      } catch {
        if (this.stopped) return;
      }
      if (this.stopped) return;
      this.options.onStatus('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 15_000);
    }
  }
}
