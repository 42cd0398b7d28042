/** One frame of a text/event-stream response. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** A minimal EventSource: records every frame of one text/event-stream response until it ends or is closed. */
export class SseClient {
  readonly frames: SseFrame[] = [];
  ended = false;

  private constructor(
    readonly status: number,
    readonly contentType: string | null,
    /** The body of a response that is not a stream (an error), else empty. */
    readonly body: string,
    private readonly controller: AbortController,
  ) {}

  static async open(url: string, headers: Record<string, string>): Promise<SseClient> {
    const controller = new AbortController();
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
    if (response.status !== 200 || !response.body) {
      const client = new SseClient(response.status, response.headers.get('content-type'), await response.text(), controller);
      client.ended = true;
      return client;
    }
    const client = new SseClient(response.status, response.headers.get('content-type'), '', controller);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const read = async (): Promise<void> => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          client.frames.push(parseFrame(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
        }
      }
    };
    read()
      .catch(() => undefined)
      .finally(() => (client.ended = true));
    return client;
  }

  close(): void {
    this.controller.abort();
  }
}

function parseFrame(block: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else if (line.startsWith('id: ')) frame.id = line.slice(4);
    else if (line.startsWith('event: ')) frame.event = line.slice(7);
    else if (line.startsWith('data: ')) frame.data = line.slice(6);
  }
  return frame;
}
