import type { z } from 'zod';
import { ApiError, CliError, ConnectionError, ExitCode, type Issue, UsageError } from './errors';
import { detailWithoutIssues, yamlSentence } from './messages';

const REQUEST_TIMEOUT_MS = 30_000;

/** `bytes` are sent exactly as given: for a server that judges the bytes themselves (a signed package). */
export type RequestBody = { json: unknown } | { text: string; contentType: string } | { bytes: Uint8Array; contentType: string };

export interface ApiClientOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:8484; it may carry a path prefix. */
  apiUrl: string;
  /** The bearer credential: an API key, or for the PacketADE door an actor token. */
  apiKey: string;
  /** Absent for routes outside a workspace's paths (the PacketADE door knows the workspace from its token). */
  workspace?: string;
  timeoutMs?: number;
  /** How messages name the credential and where it came from; default the API key and its flag and variable. */
  credential?: { name: string; source: string };
}

const API_KEY_CREDENTIAL = { name: 'API key', source: '--api-key or PACKETAGENT_API_KEY' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function issuesOf(problem: Record<string, unknown>): Issue[] {
  const list = Array.isArray(problem['errors']) ? problem['errors'] : Array.isArray(problem['issues']) ? problem['issues'] : [];
  return list.filter(isRecord).map((item) => ({
    path: typeof item['path'] === 'string' ? item['path'] : Array.isArray(item['path']) ? item['path'].join('.') : '',
    message: typeof item['message'] === 'string' ? yamlSentence(item['message']) : JSON.stringify(item),
  }));
}

function apiError(response: Response, text: string): ApiError {
  let problem: unknown;
  try {
    problem = JSON.parse(text);
  } catch {
    problem = undefined;
  }
  if (isRecord(problem) && typeof problem['title'] === 'string') {
    const issues = issuesOf(problem);
    const detail = typeof problem['detail'] === 'string' && problem['detail'] ? `: ${detailWithoutIssues(problem['detail'], issues)}` : '';
    return new ApiError(response.status, `${problem['title']}${detail}`, issues, problem);
  }
  return new ApiError(response.status, `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`, []);
}

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
}

// Duck-typed rather than `instanceof Error`: fetch's errors may come from another realm.
function asErrorLike(value: unknown): ErrorLike {
  return typeof value === 'object' && value !== null ? (value as ErrorLike) : { message: String(value) };
}

function connectionReason(error: unknown, timeoutMs: number): string {
  const failure = asErrorLike(error);
  if (failure.name === 'TimeoutError' || failure.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  // fetch reports "fetch failed" and keeps the socket's error (ECONNREFUSED, ENOTFOUND, ...) as its cause.
  const cause = failure.cause === undefined ? failure : asErrorLike(failure.cause);
  const message = typeof cause.message === 'string' && cause.message ? cause.message : String(failure.message);
  return typeof cause.code === 'string' && !message.includes(cause.code) ? `${cause.code}: ${message}` : message;
}

/** Calls the REST API of one workspace with an API key. */
export class ApiClient {
  private readonly base: URL;

  constructor(private readonly options: ApiClientOptions) {
    let base: URL;
    try {
      base = new URL(options.apiUrl);
    } catch {
      throw new UsageError(`the API URL "${options.apiUrl}" is not a URL (--api-url or PACKETAGENT_API_URL)`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new UsageError(`the API URL "${options.apiUrl}" is not http or https (--api-url or PACKETAGENT_API_URL)`);
    }
    // The key is the only credential; a password in the URL would end up in messages.
    if (base.username || base.password) {
      throw new UsageError('the API URL must not carry a user name or password (--api-url or PACKETAGENT_API_URL)');
    }
    // A header value with a line break would make fetch throw before connecting.
    if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
      const credential = options.credential ?? API_KEY_CREDENTIAL;
      throw new UsageError(`the ${credential.name} contains spaces or characters an HTTP header cannot carry (${credential.source})`);
    }
    if (!base.pathname.endsWith('/')) base.pathname = `${base.pathname}/`;
    base.search = '';
    base.hash = '';
    this.base = base;
  }

  /** An absolute URL for a path under the API base, e.g. `hooks/<id>`. */
  url(path: string): string {
    return new URL(path.replace(/^\/+/, ''), this.base).toString();
  }

  /** A path under /api/v1/workspaces/<workspace>/, each segment encoded. */
  workspacePath(...segments: (string | number)[]): string {
    if (this.options.workspace === undefined) throw new UsageError('no workspace: pass --workspace or set PACKETAGENT_WORKSPACE');
    return ['api/v1/workspaces', this.options.workspace, ...segments].map((s, i) => (i === 0 ? s : encodeURIComponent(String(s)))).join('/');
  }

  get<S extends z.ZodType>(path: string, schema: S, query: Record<string, string | undefined> = {}): Promise<z.output<S>> {
    return this.request('GET', path, schema, undefined, query);
  }

  post<S extends z.ZodType>(path: string, body: RequestBody, schema: S): Promise<z.output<S>> {
    return this.request('POST', path, schema, body);
  }

  put<S extends z.ZodType>(path: string, body: RequestBody, schema: S): Promise<z.output<S>> {
    return this.request('PUT', path, schema, body);
  }

  /**
   * Opens a text/event-stream response and answers its body, to be read until the server ends it
   * or `signal` aborts. Only the wait for the response's headers is bounded by the timeout; a
   * refusal is an ApiError as for any other request.
   */
  async openStream(path: string, options: { signal: AbortSignal; headers?: Record<string, string>; query?: Record<string, string | undefined> }): Promise<ReadableStream<Uint8Array>> {
    const url = new URL(this.url(path));
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const timeoutMs = this.options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    const connecting = new AbortController();
    const abort = () => connecting.abort(options.signal.reason);
    options.signal.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(() => connecting.abort(new DOMException('no answer', 'TimeoutError')), timeoutMs);
    let response: Response;
    try {
      if (options.signal.aborted) abort();
      response = await fetch(url, {
        headers: { authorization: `Bearer ${this.options.apiKey}`, accept: 'text/event-stream, application/problem+json', ...options.headers },
        signal: connecting.signal,
      });
    } catch (error) {
      options.signal.removeEventListener('abort', abort);
      // The caller's own abort is not a connection failure: it sees its signal and stops.
      if (options.signal.aborted) throw error;
      throw new ConnectionError(url.toString(), connectionReason(error, timeoutMs), { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok || !response.body) {
      options.signal.removeEventListener('abort', abort);
      throw apiError(response, await response.text().catch(() => ''));
    }
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      options.signal.removeEventListener('abort', abort);
      await response.body.cancel().catch(() => undefined);
      throw new CliError(`the answer to GET ${url.pathname} is not an event stream`, ExitCode.failure);
    }
    // The listener stays: the caller's abort also ends the reading of the body.
    return response.body;
  }

  /** The body exactly as sent, for routes that answer content rather than a JSON document. */
  async getBytes(path: string): Promise<Buffer> {
    return (await this.exchange('GET', path)).bytes;
  }

  /** For routes that answer 204 with no body. */
  async delete(path: string): Promise<void> {
    await this.exchange('DELETE', path);
  }

  /** A POST to a route that answers 204 with no body. */
  async postWithoutAnswer(path: string, body: RequestBody): Promise<void> {
    await this.exchange('POST', path, body);
  }

  /** The answer is checked against the fields the CLI reads, so a server of another version fails clearly. */
  private async request<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: RequestBody,
    query: Record<string, string | undefined> = {},
  ): Promise<z.output<S>> {
    const { url, text } = await this.exchange(method, path, body, query);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new CliError(`the answer to ${method} ${url.pathname} is not JSON`, ExitCode.failure);
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new CliError(
        `unexpected answer to ${method} ${url.pathname}`,
        ExitCode.failure,
        parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
      );
    }
    return parsed.data;
  }

  /** Sends one request and answers the body of a 2xx response; any other status becomes an ApiError. */
  private async exchange(
    method: string,
    path: string,
    body?: RequestBody,
    query: Record<string, string | undefined> = {},
  ): Promise<{ url: URL; text: string; bytes: Buffer }> {
    const url = new URL(this.url(path));
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: 'application/json, application/problem+json',
    };
    let payload: string | Uint8Array | undefined;
    if (body && 'json' in body) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body.json);
    } else if (body && 'bytes' in body) {
      headers['content-type'] = body.contentType;
      payload = body.bytes;
    } else if (body) {
      headers['content-type'] = body.contentType;
      payload = body.text;
    }
    const timeoutMs = this.options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    let response: Response;
    let bytes: Buffer;
    try {
      response = await fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(timeoutMs) });
      bytes = Buffer.from(await response.arrayBuffer());
    } catch (error) {
      throw new ConnectionError(url.toString(), connectionReason(error, timeoutMs), { cause: error });
    }
    const text = bytes.toString('utf8');
    if (!response.ok) throw apiError(response, text);
    return { url, text, bytes };
  }
}
