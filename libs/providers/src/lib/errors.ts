import { DomainError } from '@packetagent/contracts';
import type { ProviderName } from './provider.types';

export const PROVIDER_ERROR_CODES = [
  'provider_rate_limited',
  'provider_server_error',
  'provider_timeout',
  'provider_connection_failed',
  'provider_auth_failed',
  'provider_bad_request',
  'provider_context_exceeded',
  'provider_bad_response',
  'provider_aborted',
  'provider_unavailable',
  'model_not_in_catalog',
  'script_name_invalid',
  'script_not_found',
  'script_invalid',
  'script_exhausted',
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

/** Failures that a later attempt of the same request may not repeat. */
const RETRYABLE: ReadonlySet<ProviderErrorCode> = new Set([
  'provider_rate_limited',
  'provider_server_error',
  'provider_timeout',
  'provider_connection_failed',
]);

export interface ProviderErrorDetails {
  provider?: ProviderName;
  model?: string;
  /** HTTP status the provider answered with, when there was an answer. */
  status?: number;
  /** How long the provider asked us to wait before the next attempt. */
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * Every failure of a model call. Messages name the provider, the model and what went wrong;
 * they never carry an API key or a request body, so they can be logged and shown as they are.
 */
export class ProviderError extends DomainError {
  override readonly retryable: boolean;
  readonly provider: ProviderName | undefined;
  readonly model: string | undefined;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    details: ProviderErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.retryable = RETRYABLE.has(code);
    this.provider = details.provider;
    this.model = details.model;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
  }
}

export function isProviderError(error: unknown, code?: ProviderErrorCode): error is ProviderError {
  return error instanceof ProviderError && (code === undefined || error.code === code);
}

/**
 * Reads the wait a server asked for: `retry-after-ms` (OpenAI, Anthropic) first, then
 * `retry-after` as seconds or as an HTTP date.
 */
export function retryAfterMsFromHeaders(headers: Headers | undefined | null, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  const after = headers.get('retry-after');
  if (after === null || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const KEY_SHAPES = [/sk-[A-Za-z0-9_*-]{6,}/g, /AIza[0-9A-Za-z_-]{20,}/g, /Bearer\s+[A-Za-z0-9._~+/=-]{8,}/gi];
const MAX_SERVER_TEXT = 300;

/**
 * Makes a provider's own error text safe to carry: the key in use and anything shaped like a
 * key are masked (OpenAI echoes part of a rejected key), and the text is cut short.
 */
export function redactServerText(text: string, secret?: string): string {
  let safe = text;
  if (secret && secret.length >= 4) safe = safe.split(secret).join('[redacted]');
  for (const shape of KEY_SHAPES) safe = safe.replace(shape, '[redacted]');
  safe = safe.replace(/\s+/g, ' ').trim();
  return safe.length > MAX_SERVER_TEXT ? `${safe.slice(0, MAX_SERVER_TEXT)}…` : safe;
}

const CONTEXT_EXCEEDED = /context[_ ]length|context window|prompt is too long|too many tokens|maximum context|exceeds the (?:maximum|context)|input token count/i;

export interface HttpFailure {
  provider: ProviderName;
  model: string;
  status: number;
  headers?: Headers | null;
  /** The provider's error text, if any (redacted here). */
  serverMessage?: string | null;
  /** A provider error code such as OpenAI's `context_length_exceeded`. */
  serverCode?: string | null;
  /** The key used for the call, so that it is masked if the server echoes it. */
  secret?: string;
  /** Set when the server's own retry hint came in the body instead of a header. */
  retryAfterMs?: number;
  cause?: unknown;
}

/** Maps an HTTP error answer of any provider to a typed error. */
export function providerErrorFromHttp(failure: HttpFailure): ProviderError {
  const { provider, model, status } = failure;
  const serverText = failure.serverMessage ? redactServerText(failure.serverMessage, failure.secret) : '';
  const suffix = serverText ? `: ${serverText}` : '';
  const details: ProviderErrorDetails = { provider, model, status, cause: failure.cause };
  const where = `${provider} ${model}`;
  if (status === 401 || status === 403) {
    // The server's text for a rejected key may quote part of it: say only what happened.
    return new ProviderError('provider_auth_failed', `${where}: the API key was refused (HTTP ${status}); check the key configured for ${provider}`, details);
  }
  if (status === 429) {
    const retryAfterMs = failure.retryAfterMs ?? retryAfterMsFromHeaders(failure.headers);
    return new ProviderError('provider_rate_limited', `${where}: rate limited (HTTP 429)${suffix}`, { ...details, retryAfterMs });
  }
  if (status === 408) {
    return new ProviderError('provider_timeout', `${where}: the provider timed out the request (HTTP 408)${suffix}`, details);
  }
  if (status >= 500) {
    const retryAfterMs = failure.retryAfterMs ?? retryAfterMsFromHeaders(failure.headers);
    return new ProviderError('provider_server_error', `${where}: server error (HTTP ${status})${suffix}`, { ...details, retryAfterMs });
  }
  if (failure.serverCode === 'context_length_exceeded' || ((status === 400 || status === 413) && CONTEXT_EXCEEDED.test(failure.serverMessage ?? ''))) {
    return new ProviderError('provider_context_exceeded', `${where}: the conversation does not fit the model's context window (HTTP ${status})${suffix}`, details);
  }
  return new ProviderError('provider_bad_request', `${where}: request refused (HTTP ${status})${suffix}`, details);
}

export function abortedError(provider: ProviderName, model: string, cause?: unknown): ProviderError {
  return new ProviderError('provider_aborted', `${provider} ${model}: the call was aborted`, { provider, model, cause });
}

/** fetch wraps the reason (ECONNREFUSED, a reset socket) in its own "fetch failed": the innermost says more. */
function innermostMessage(error: unknown): string | undefined {
  let message: string | undefined;
  // Duck-typed: errors raised inside Node's fetch may come from another realm than Error here.
  let current = error as { message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    if (typeof current.message === 'string' && current.message !== '') message = current.message;
    current = current.cause as typeof current;
  }
  return message;
}

export function connectionError(provider: ProviderName, model: string, cause: unknown): ProviderError {
  const inner = innermostMessage(cause);
  const reason = inner ? redactServerText(inner) : 'connection failed';
  return new ProviderError('provider_connection_failed', `${provider} ${model}: could not reach the provider (${reason})`, { provider, model, cause });
}

export function badResponseError(provider: ProviderName, model: string, what: string, cause?: unknown): ProviderError {
  return new ProviderError('provider_bad_response', `${provider} ${model}: unexpected answer (${what})`, { provider, model, cause });
}
