import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackApiOptions {
  /** The bot token the API accepts (default `xoxb-test-token`). */
  token?: string;
  /** Channel names the workspace has, with their ids (default `#ops` → `C0OPS`). */
  channels?: Readonly<Record<string, string>>;
}

export interface SlackApiCall {
  /** `chat.postMessage`, `chat.update`, or `webhook` for a post to an incoming webhook. */
  method: string;
  path: string;
  authorization: string | null;
  contentType: string | null;
  body: Record<string, unknown>;
}

export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[] | null;
  /** How many times chat.update changed it. */
  edits: number;
}

/** An answer to give instead of the API's own, once. */
export interface SlackApiFailure {
  status?: number;
  headers?: Record<string, string>;
  /** JSON for the API (e.g. `{ ok: false, error: 'ratelimited' }`), text for a webhook. */
  body?: unknown;
}

export interface TestSlackApi {
  /** `http://127.0.0.1:<port>/api/`, for a bot credential's `apiBaseUrl`. */
  apiBaseUrl: string;
  /** The `host:port` a delivery's allowPrivate must hold. */
  hostPort: string;
  /** An incoming-webhook URL of this server (its path is the secret part, as Slack's are). */
  webhookUrl(secret?: string): string;
  token: string;
  calls: SlackApiCall[];
  /** Messages posted through chat.postMessage, as chat.update left them, and through webhooks. */
  messages: SlackMessage[];
  /** Answers the next request(s) with these, in order, instead of handling them. */
  failNext(...answers: SlackApiFailure[]): void;
  reset(): void;
  close(): Promise<void>;
}

/**
 * Enough of Slack's Web API and incoming webhooks for the channel: chat.postMessage and
 * chat.update answer as Slack does (HTTP 200 with `ok`), the bearer token is checked, and
 * every call is recorded.
 */
export async function startSlackApi(options: SlackApiOptions = {}): Promise<TestSlackApi> {
  const token = options.token ?? 'xoxb-test-token';
  const channels = options.channels ?? { '#ops': 'C0OPS' };
  const calls: SlackApiCall[] = [];
  const messages: SlackMessage[] = [];
  const failures: SlackApiFailure[] = [];
  let sequence = 0;

  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void =>
    void response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));

  function api(method: string, call: SlackApiCall, response: ServerResponse): void {
    if (call.authorization === null) return json(response, 200, { ok: false, error: 'not_authed' });
    if (call.authorization !== `Bearer ${token}`) return json(response, 200, { ok: false, error: 'invalid_auth' });
    const { body } = call;
    const text = typeof body['text'] === 'string' ? body['text'] : '';
    const blocks = Array.isArray(body['blocks']) ? body['blocks'] : null;
    if (method === 'chat.postMessage') {
      const wanted = String(body['channel'] ?? '');
      const channel = channels[wanted] ?? Object.values(channels).find((id) => id === wanted);
      if (!channel) return json(response, 200, { ok: false, error: 'channel_not_found' });
      if (!text && !blocks) return json(response, 200, { ok: false, error: 'no_text' });
      sequence += 1;
      const ts = `${1_700_000_000 + sequence}.${String(sequence).padStart(6, '0')}`;
      messages.push({ channel, ts, text, blocks, edits: 0 });
      return json(response, 200, { ok: true, channel, ts, message: { type: 'message', text, ts } });
    }
    if (method === 'chat.update') {
      const message = messages.find((candidate) => candidate.channel === body['channel'] && candidate.ts === body['ts']);
      if (!message) return json(response, 200, { ok: false, error: 'message_not_found' });
      message.text = text;
      message.blocks = blocks;
      message.edits += 1;
      return json(response, 200, { ok: true, channel: message.channel, ts: message.ts, text });
    }
    json(response, 200, { ok: false, error: 'unknown_method' });
  }

  function handle(request: IncomingMessage, raw: string, response: ServerResponse): void {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const method = path.startsWith('/api/') ? path.slice('/api/'.length) : path.startsWith('/services/') ? 'webhook' : path;
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = {};
    }
    const call: SlackApiCall = { method, path, authorization: request.headers.authorization ?? null, contentType: request.headers['content-type'] ?? null, body };
    calls.push(call);
    const failure = failures.shift();
    if (failure) {
      const status = failure.status ?? 200;
      if (typeof failure.body === 'string') return void response.writeHead(status, { 'content-type': 'text/plain', ...failure.headers }).end(failure.body);
      return json(response, status, failure.body ?? {}, failure.headers);
    }
    if (method === 'webhook') {
      if (typeof body['text'] !== 'string' || body['text'] === '') return void response.writeHead(400, { 'content-type': 'text/plain' }).end('no_text');
      sequence += 1;
      messages.push({ channel: path, ts: String(sequence), text: body['text'], blocks: Array.isArray(body['blocks']) ? body['blocks'] : null, edits: 0 });
      return void response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }
    if (request.method !== 'POST') return void response.writeHead(405).end();
    api(method, call, response);
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, Buffer.concat(chunks).toString('utf8'), response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBaseUrl: `http://127.0.0.1:${port}/api/`,
    hostPort: `127.0.0.1:${port}`,
    webhookUrl: (secret = 'XXXXSECRETXXXX') => `http://127.0.0.1:${port}/services/T000/B000/${secret}`,
    token,
    calls,
    messages,
    failNext: (...answers) => void failures.push(...answers),
    reset() {
      calls.length = 0;
      messages.length = 0;
      failures.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
