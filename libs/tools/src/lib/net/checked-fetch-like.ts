import { checkedFetch, CHECKED_FETCH_METHODS, type CheckedFetchMethod } from './checked-fetch';
import type { HostResolver } from '../tool.types';

export interface CheckedFetchLikeOptions {
  allowPrivate: readonly string[];
  maxResponseBytes: number;
  timeoutMs: number;
  resolveHost?: HostResolver;
}

/** Statuses whose answers have no body (a Response refuses one). */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304]);

/** A fetch request's headers as a plain record, names lower-cased. */
export function fetchRequestHeaders(init: RequestInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

/** Node's response headers as a fetch Headers, repeated ones kept. */
export function fetchResponseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** A fetch request's body as bytes: strings, form parameters and byte arrays, nothing streamed. */
export function fetchRequestBody(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new TypeError('only string, URLSearchParams and byte bodies are sent');
}

/**
 * A `fetch` for libraries that take one (an OAuth client, an SDK): every request through
 * checkedFetch, so each resolved address is checked, public addresses only unless allowlisted,
 * redirects answered as they are, and the whole answer buffered under `maxResponseBytes`.
 */
export function checkedFetchLike(options: CheckedFetchLikeOptions): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (!(CHECKED_FETCH_METHODS as readonly string[]).includes(method)) throw new TypeError(`the method ${method} is not sent`);
    const headers = fetchRequestHeaders(init);
    if (init?.body instanceof URLSearchParams && !headers['content-type']) headers['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
    const response = await checkedFetch({
      url: url instanceof URL ? url.href : url,
      method: method as CheckedFetchMethod,
      headers,
      body: fetchRequestBody(init?.body),
      maxResponseBytes: options.maxResponseBytes,
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate,
      ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
      ...(init?.signal ? { signal: init.signal } : {}),
    });
    const answerHeaders = fetchResponseHeaders(response.headers);
    // The body is already decoded: a content-encoding left on it would be decoded twice.
    answerHeaders.delete('content-encoding');
    answerHeaders.delete('content-length');
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : new Uint8Array(response.body), { status: response.status, statusText: response.statusText, headers: answerHeaders });
  };
}
