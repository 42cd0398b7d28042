/** One dispatched text/event-stream message. */
export interface SseMessage {
  /** The block's own `id:` field; undefined when it had none. */
  id?: string;
  /** `message` when the block named none. */
  event: string;
  data: string;
}

/**
 * An incremental parser of the text/event-stream format (HTML Living Standard, 9.2.6): text goes
 * in as it arrives, in chunks cut anywhere; whole messages come out. Comments (`: heartbeat`)
 * and blocks without data dispatch nothing; `retry:` is kept as the reconnection delay the
 * server asks for.
 */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private hasData = false;
  /** The last valid `retry:` in milliseconds, or null before one was seen. */
  retryMs: number | null = null;

  push(text: string): SseMessage[] {
    this.buffer += text;
    const messages: SseMessage[] = [];
    let end: number;
    while ((end = this.lineEnd()) >= 0) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(this.buffer[end] === '\r' && this.buffer[end + 1] === '\n' ? end + 2 : end + 1);
      if (line === '') {
        if (this.hasData) messages.push({ ...(this.id !== undefined ? { id: this.id } : {}), event: this.event || 'message', data: this.data.join('\n') });
        this.id = undefined;
        this.event = '';
        this.data = [];
        this.hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') {
        this.data.push(value);
        this.hasData = true;
      } else if (field === 'event') this.event = value;
      else if (field === 'id' && !value.includes('\0')) this.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
    }
    return messages;
  }

  /** A lone `\r` at the end of the buffer may be the start of `\r\n`: wait for the next chunk. */
  private lineEnd(): number {
    const match = /\r\n|\r|\n/.exec(this.buffer);
    if (!match) return -1;
    if (match[0] === '\r' && match.index === this.buffer.length - 1) return -1;
    return match.index;
  }
}
