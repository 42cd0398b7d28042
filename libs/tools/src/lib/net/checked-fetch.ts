import { DomainError } from '@packetagent/contracts';
import { ToolFailure } from '../errors';
import { abortable, deadline } from '../internal/deadline';
import type { HostResolver } from '../tool.types';
import { checkedDestination, systemResolver } from './destination';
import { exchange, type HttpResponse } from './http-client';

export const CHECKED_FETCH_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type CheckedFetchMethod = (typeof CHECKED_FETCH_METHODS)[number];

export interface CheckedFetchRequest {
  url: string | URL;
  method: CheckedFetchMethod;
  headers: Record<string, string>;
  body?: Buffer;
  /** The decoded body, and the body on the wire, are each cut off (and the request failed) past it. */
  maxResponseBytes: number;
  /** From the start of the address checks to the last byte of the body. */
  timeoutMs: number;
  /** Exact `host:port` pairs that may resolve to private addresses (operator allowlist). */
  allowPrivate: readonly string[];
  /** Every A and AAAA answer for a host name; the system resolver when absent. */
  resolveHost?: HostResolver;
  signal?: AbortSignal;
  /**
   * checkedStream only: a keep-alive agent of the caller's (an http.Agent for http URLs, an
   * https.Agent for https ones) whose connections later requests may reuse. Each request's
   * addresses are still checked, and the connection it gets must be to the address checked.
   */
  agent?: import('node:http').Agent;
  /** checkedFetch, https only: PEM certificates trusted instead of the system's (an operator's private CA). */
  ca?: string;
}

export interface CheckedFetchResponse extends HttpResponse {
  /** The address the connection was made to, after every address of the host was checked. */
  connectedAddress: string;
}

/** The codes http_fetch answers with for the same failures, plus `invalid_url` and `aborted`. */
export type CheckedFetchErrorCode =
  | 'invalid_url'
  | 'destination_not_allowed'
  | 'dns_failed'
  | 'connection_failed'
  | 'response_too_large'
  | 'unsupported_encoding'
  | 'timeout'
  | 'aborted';

const KNOWN_CODES: ReadonlySet<string> = new Set<CheckedFetchErrorCode>([
  'destination_not_allowed',
  'dns_failed',
  'connection_failed',
  'response_too_large',
  'unsupported_encoding',
  'timeout',
]);

export class CheckedFetchError extends DomainError {
  constructor(
    readonly code: CheckedFetchErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function requestUrl(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw new CheckedFetchError('invalid_url', 'not an absolute URL', { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CheckedFetchError('invalid_url', `the scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
  // The exchange never sends userinfo, so a URL carrying it would silently lose it.
  if (url.username || url.password) throw new CheckedFetchError('invalid_url', 'credentials in the URL are not sent');
  return url;
}

export function asCheckedFetchError(error: unknown, signal: AbortSignal | undefined): CheckedFetchError {
  if (error instanceof CheckedFetchError) return error;
  if (error instanceof ToolFailure && KNOWN_CODES.has(error.code)) return new CheckedFetchError(error.code as CheckedFetchErrorCode, error.message, { cause: error });
  if (signal?.aborted) return new CheckedFetchError('aborted', 'the request was aborted', { cause: error });
  return new CheckedFetchError('connection_failed', error instanceof Error ? error.message : 'the request failed', { cause: error });
}

/**
 * One HTTP exchange with http_fetch's address rules: every address the host resolves to is
 * checked (one private answer refuses the request unless `host:port` is allowlisted), the
 * connection is pinned to the checked address, and a 3xx is answered as is, never followed.
 */
export async function checkedFetch(request: CheckedFetchRequest): Promise<CheckedFetchResponse> {
  const url = requestUrl(request.url);
  const limit = deadline(request.signal ?? new AbortController().signal, request.timeoutMs);
  try {
    const pinned = await abortable(checkedDestination(url, { resolveHost: request.resolveHost ?? systemResolver, allowPrivate: request.allowPrivate }), limit.signal);
    const response = await exchange({
      url,
      method: request.method,
      headers: request.headers,
      body: request.body,
      pinned,
      maxResponseBytes: request.maxResponseBytes,
      signal: limit.signal,
      ...(request.ca ? { ca: request.ca } : {}),
    });
    return { ...response, connectedAddress: pinned.address };
  } catch (error) {
    throw asCheckedFetchError(error, request.signal);
  } finally {
    limit.dispose();
  }
}
