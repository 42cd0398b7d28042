import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { McpErrorCodes } from '@packetagent/contracts';
import { CHECKED_FETCH_METHODS, checkedStream, fetchRequestBody, fetchRequestHeaders, fetchResponseHeaders, NULL_BODY_STATUSES, type CheckedFetchMethod, type HostResolver } from '@packetagent/tools';
import { currentGuard } from './call-guard';
import { McpCallError } from './mcp-call-error';

export interface CheckedMcpFetchOptions {
  server: string;
  allowPrivate: readonly string[];
  /** Each HTTP answer's body is cut (and its request failed) past this many bytes. */
  maxResponseBytes: number;
  /** Address checks and the response head. */
  timeoutMs: number;
  /** Read at every request, so a refreshed token is used from the next one on. */
  bearer: () => string | undefined;
  resolveHost?: HostResolver;
  /** Keep-alive agents of the session, so its requests reuse their connections (each still address-checked). */
  agents?: SessionAgents;
}

/** One session's keep-alive connections to its server, closed with the session. */
export class SessionAgents {
  readonly http = new http.Agent({ keepAlive: true });
  readonly https = new https.Agent({ keepAlive: true });

  for(url: string): http.Agent {
    return url.startsWith('https:') ? this.https : this.http;
  }

  destroy(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/**
 * The `fetch` the SDK's Streamable HTTP transport uses: every request through checkedStream
 * (each resolved address checked, the connection pinned to it, public addresses only unless
 * allowlisted), the bearer added here and nowhere else, each answer capped while it arrives. An
 * answer over the cap fails the request it belongs to as `mcp_result_too_large`.
 */
export function checkedMcpFetch(options: CheckedMcpFetchOptions): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const guard = currentGuard.getStore();
    const method = (init?.method ?? 'GET').toUpperCase();
    if (!(CHECKED_FETCH_METHODS as readonly string[]).includes(method)) throw new TypeError(`the MCP transport asked for the method ${method}`);
    const headers = fetchRequestHeaders(init);
    const bearer = options.bearer();
    if (bearer) headers['authorization'] = `Bearer ${bearer}`;
    const signals = [init?.signal, guard?.signal].filter((signal): signal is AbortSignal => !!signal);
    const response = await checkedStream({
      url: url instanceof URL ? url.href : url,
      method: method as CheckedFetchMethod,
      headers,
      body: fetchRequestBody(init?.body),
      maxResponseBytes: options.maxResponseBytes,
      timeoutMs: options.timeoutMs,
      allowPrivate: options.allowPrivate,
      ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
      ...(signals.length ? { signal: AbortSignal.any(signals) } : {}),
      ...(options.agents ? { agent: options.agents.for(url instanceof URL ? url.href : url) } : {}),
    });
    const tooLarge = (error: unknown) => {
      if ((error as { code?: unknown }).code !== 'response_too_large') return;
      guard?.fail(new McpCallError(McpErrorCodes.resultTooLarge, `${options.server} sent an answer larger than ${options.maxResponseBytes} bytes; it was refused while arriving`, { cause: error }));
    };
    // A body that failed before this point would read as a clean, empty end through toWeb.
    if (response.body.errored) {
      tooLarge(response.body.errored);
      throw response.body.errored;
    }
    response.body.on('error', tooLarge);
    const body = NULL_BODY_STATUSES.has(response.status) ? null : (Readable.toWeb(response.body) as ReadableStream<Uint8Array>);
    if (!body) response.body.destroy();
    return new Response(body, { status: response.status, statusText: response.statusText, headers: fetchResponseHeaders(response.headers) });
  };
}
