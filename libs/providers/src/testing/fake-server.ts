import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the fake provider received it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (null when empty or not JSON); match it with toMatchObject. */
  body: unknown;
  /** Becomes true when the client closed the connection before the answer was complete. */
  clientClosed: boolean;
}

export interface FakeToolCall {
  id?: string;
  name: string;
  /** The argument text as a model would write it; need not be valid JSON. */
  arguments: string;
}

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
  /** Thinking tokens, where the provider counts them apart from the output (Gemini). */
  reasoningTokens?: number;
}

/** A model turn, written by each fake in its provider's wire format (streamed when asked). */
export interface FakeTurnReply {
  kind: 'turn';
  text?: string;
  /** Thinking, in the provider's own form (thinking block, thought part, reasoning_details...). */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  usage?: FakeUsage;
  /** Leave usage out of the answer altogether. */
  omitUsage?: boolean;
  stop?: 'end_turn' | 'tool_use' | 'max_tokens';
}

export interface FakeErrorReply {
  kind: 'error';
  status: number;
  message?: string;
  /** A provider error code, e.g. OpenAI's context_length_exceeded. */
  code?: string;
  /** Sent the way the provider says it: a retry-after header, or Gemini's RetryInfo detail. */
  retryAfterSeconds?: number;
  headers?: Record<string, string>;
}

/** Holds the request open without answering until the client gives up or the server closes. */
export interface FakeHangReply {
  kind: 'hang';
}

/** Closes the socket without an answer. */
export interface FakeDropReply {
  kind: 'drop';
}

export type FakeReply = FakeTurnReply | FakeErrorReply | FakeHangReply | FakeDropReply;

export const reply = {
  text: (text: string, extra: Omit<FakeTurnReply, 'kind' | 'text'> = {}): FakeTurnReply => ({ kind: 'turn', text, ...extra }),
  toolCalls: (toolCalls: FakeToolCall[], extra: Omit<FakeTurnReply, 'kind' | 'toolCalls'> = {}): FakeTurnReply => ({ kind: 'turn', toolCalls, ...extra }),
  error: (status: number, extra: Omit<FakeErrorReply, 'kind' | 'status'> = {}): FakeErrorReply => ({ kind: 'error', status, ...extra }),
  hang: (): FakeHangReply => ({ kind: 'hang' }),
  drop: (): FakeDropReply => ({ kind: 'drop' }),
};

export const DEFAULT_FAKE_USAGE: FakeUsage = { inputTokens: 11, outputTokens: 7 };

/** Cuts text into pieces of `size` characters, as a streaming server would send it. */
export function fragments(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/**
 * A provider API on a local port, for tests that drive the real SDKs over real HTTP. Replies are
 * queued with `reply()` and used one per request; every request is recorded. With the queue
 * empty it answers 500, so a test that makes an unexpected call fails loudly.
 */
export abstract class FakeProviderServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeReply[] = [];
  private server: Server | undefined;
  private origin = '';

  /** http://127.0.0.1:port */
  get url(): string {
    if (!this.origin) throw new Error(`${this.constructor.name} is not started`);
    return this.origin;
  }

  /** The base URL an SDK of this provider is given. */
  abstract get baseUrl(): string;

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.receive(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(error instanceof Error ? error.message : 'fake server failure');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  reply(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Forgets queued replies and recorded requests (between tests). */
  reset(): void {
    this.queue.length = 0;
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Whether this fake serves the request's method and path. */
  protected abstract accepts(request: RecordedRequest): boolean;
  protected abstract isStreaming(request: RecordedRequest): boolean;
  protected abstract writeTurn(res: ServerResponse, request: RecordedRequest, turn: FakeTurnReply, streaming: boolean): void;
  protected abstract writeError(res: ServerResponse, request: RecordedRequest, error: FakeErrorReply): void;

  protected writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text).toString(), ...headers });
    res.end(text);
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.origin);
    let body: unknown = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = null;
    }
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      clientClosed: false,
    };
    res.on('close', () => {
      if (!res.writableFinished) recorded.clientClosed = true;
    });
    if (!this.accepts(recorded)) {
      this.writeJson(res, 404, { error: { message: `no route ${recorded.method} ${recorded.path}` } });
      return;
    }
    this.requests.push(recorded);
    const next = this.queue.shift() ?? { kind: 'error', status: 500, message: 'the fake server has no reply queued for this request' };
    switch (next.kind) {
      case 'hang':
        return;
      case 'drop':
        req.socket.destroy();
        return;
      case 'error':
        this.writeError(res, recorded, next);
        return;
      case 'turn':
        this.writeTurn(res, recorded, next, this.isStreaming(recorded));
        return;
    }
  }
}

/** Writes server-sent events: `event:` lines where the provider names its events, then `data:`. */
export function writeSse(res: ServerResponse, events: { event?: string; data: unknown }[], done?: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const { event, data } of events) {
    res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  if (done) res.write(`data: ${done}\n\n`);
  res.end();
}

/** The parsed arguments where they are JSON, the raw text otherwise (for fakes whose wire carries objects). */
export function argumentsValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** A top-level field of the recorded JSON body. */
export function bodyField(request: RecordedRequest, field: string): unknown {
  const body = request.body;
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[field] : undefined;
}
