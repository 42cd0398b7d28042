import type { IncomingHttpHeaders } from 'node:http';
import { redactResource, type BlockedRequestSchema } from '@packetagent/contracts';
import { CHECKED_FETCH_METHODS, checkedFetch, CheckedFetchError, type CheckedFetchMethod, type CheckedFetchResponse, type HostResolver } from '@packetagent/tools';
import type { BrowserContext, Request, Route, WebSocketRoute } from 'playwright-core';
import type { z } from 'zod';
import type { BrowserGrants } from './browser-grants';
import { forwardedRequestHeaders, fulfilledResponseHeaders, setCookieLines } from './forwarded-headers';
import { applyRedirectCookies } from './redirect-cookies';

export type BlockedRequest = z.infer<typeof BlockedRequestSchema>;

/** Why the main frame's navigation did not reach a page, for the action's error. */
export interface NavigationProblem {
  /** The navigation's URL: a navigation still running from an earlier action notes its own. */
  url: string;
  refused: boolean;
  message: string;
}

/** The run's side of the interception: what it may reach now, and where refusals go. */
export interface TrafficSession {
  readonly grants: BrowserGrants;
  readonly requestTimeoutMs: number;
  /** Aborted when the run's context closes, ending its exchanges in flight. */
  readonly signal: AbortSignal;
  record(blocked: BlockedRequest): void;
  noteNavigationProblem(problem: NavigationProblem): void;
  /** The main frame's navigation was redirected to `target` and aborted: whoever awaits it navigates there instead. */
  noteNavigationRedirect(target: string): void;
}

export interface TrafficRules {
  allowPrivate: readonly string[];
  maxResponseBytes: number;
  resolveHost?: HostResolver;
}

export const MAX_REDIRECTS = 20;

export const WEBSOCKET_REFUSED = 'WebSocket connections are not made: only HTTP requests are fetched through the address checks';

/** Failures that are the service's own rules rather than the network's: recorded as blocked. */
const REFUSING_FETCH_CODES = new Set(['destination_not_allowed', 'response_too_large', 'unsupported_encoding', 'invalid_url']);

const ABORT_CODES: Readonly<Record<string, string>> = { dns_failed: 'namenotresolved', timeout: 'timedout', aborted: 'aborted' };

interface Hop {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

function isCheckedMethod(method: string): method is CheckedFetchMethod {
  return (CHECKED_FETCH_METHODS as readonly string[]).includes(method);
}

function redirectTarget(response: CheckedFetchResponse, from: string): string | null {
  const location = response.headers.location;
  if (response.status < 300 || response.status >= 400 || !location) return null;
  try {
    return new URL(location, from).href;
  } catch {
    return null;
  }
}

/** The request a redirect leads to, with the method changes browsers make (RFC 9110 section 15.4). */
function nextHop(hop: Hop, status: number, target: string): Hop {
  const keepsMethod = status === 307 || status === 308 || hop.method === 'HEAD' || (hop.method !== 'POST' && status !== 303);
  if (keepsMethod) return { ...hop, url: target };
  const headers = { ...hop.headers };
  delete headers['content-type'];
  return { url: target, method: 'GET', headers, body: undefined };
}

function isMainFrameNavigation(request: Request): boolean {
  if (!request.isNavigationRequest()) return false;
  try {
    return request.frame().parentFrame() === null;
  } catch {
    return false;
  }
}

/**
 * Answers every request of the context's pages from Node: refused unless a grant covers its URL,
 * otherwise fetched through checkedFetch (every resolved address checked, the connection pinned
 * to the checked one) and fulfilled, so Chromium never connects anywhere itself.
 *
 * Playwright lets Chromium follow a fulfilled redirect without intercepting the next hop, so no
 * 3xx is handed to Chromium: a navigation is aborted and its frame navigated to the redirect's
 * target (intercepted and checked like any navigation), a subresource is followed here hop by
 * hop while it stays on its origin, and refused when it leaves it.
 */
export class CheckedTraffic {
  /** Redirects already followed by the navigation now heading to each URL. */
  private readonly navigationRedirects = new Map<string, number>();

  constructor(
    private readonly context: BrowserContext,
    private readonly session: TrafficSession,
    private readonly rules: TrafficRules,
  ) {}

  async install(): Promise<void> {
    await this.context.route('**/*', (route) => this.handle(route));
    await this.context.routeWebSocket(() => true, (socket) => this.refuseWebSocket(socket));
  }

  private async handle(route: Route): Promise<void> {
    try {
      await this.answer(route);
    } catch {
      // The context closed while the request was answered, or Chromium refused the answer.
      await route.abort('failed').catch(() => undefined);
    }
  }

  private async answer(route: Route): Promise<void> {
    const request = route.request();
    const navigation = request.isNavigationRequest();
    const origin = new URL(request.url()).origin;
    let hop: Hop = { url: request.url(), method: request.method().toUpperCase(), headers: forwardedRequestHeaders(await request.allHeaders()), body: request.postDataBuffer() ?? undefined };
    let redirects = navigation ? this.takeNavigationRedirects(hop.url) : 0;
    for (;;) {
      const refusal = this.session.grants.refusal(hop.url) ?? (isCheckedMethod(hop.method) ? null : `the method ${hop.method} is not supported`);
      if (refusal) return this.refuse(route, hop.url, refusal);
      const response = await this.fetch(route, hop);
      if (!response) return;
      const target = redirectTarget(response, hop.url);
      if (!target) return route.fulfill({ status: response.status, headers: fulfilledResponseHeaders(response.headers), body: response.body });
      if (++redirects > MAX_REDIRECTS) return this.refuse(route, target, `more than ${MAX_REDIRECTS} redirects`);
      await this.storeCookies(response.headers, hop.url);
      if (navigation) return this.redirectNavigation(route, hop, response.status, target, redirects);
      if (new URL(target).origin !== origin) return this.refuse(route, target, 'a redirect of a subresource to another origin is not followed');
      hop = nextHop(hop, response.status, target);
    }
  }

  /** The response, or null once the request has been refused or failed. */
  private async fetch(route: Route, hop: Hop): Promise<CheckedFetchResponse | null> {
    try {
      return await checkedFetch({
        url: hop.url,
        method: hop.method as CheckedFetchMethod,
        headers: hop.headers,
        body: hop.body,
        maxResponseBytes: this.rules.maxResponseBytes,
        timeoutMs: this.session.requestTimeoutMs,
        allowPrivate: this.rules.allowPrivate,
        resolveHost: this.rules.resolveHost,
        signal: this.session.signal,
      });
    } catch (error) {
      if (!(error instanceof CheckedFetchError)) throw error;
      if (REFUSING_FETCH_CODES.has(error.code)) {
        await this.refuse(route, hop.url, error.message);
      } else {
        if (isMainFrameNavigation(route.request())) this.session.noteNavigationProblem({ url: route.request().url(), refused: false, message: error.message });
        await route.abort(ABORT_CODES[error.code] ?? 'connectionfailed');
      }
      return null;
    }
  }

  /**
   * Aborts the navigation; the next hop is a navigation of its own, intercepted and checked again.
   * For the main frame the action awaiting the aborted navigation starts it once the abort has
   * been reported (one started earlier can be reported failed in its place); a subframe is
   * navigated here. Playwright's private `_redirectNavigationRequest` is not used: when the
   * navigation it re-issues fails, a promise inside Playwright rejects with no handler, which
   * ends the Node process.
   */
  private async redirectNavigation(route: Route, hop: Hop, status: number, target: string, redirects: number): Promise<void> {
    if (nextHop(hop, status, target).method !== 'GET') {
      return this.refuse(route, target, `a ${status} redirect would send the ${hop.method} body again; it is not followed`);
    }
    this.navigationRedirects.set(target, redirects);
    const request = route.request();
    if (isMainFrameNavigation(request)) {
      this.session.noteNavigationRedirect(target);
      await route.abort('aborted');
      return;
    }
    await route.abort('aborted');
    request
      .frame()
      .goto(target, { timeout: this.session.requestTimeoutMs })
      .catch(() => undefined);
  }

  private takeNavigationRedirects(url: string): number {
    const redirects = this.navigationRedirects.get(url) ?? 0;
    this.navigationRedirects.delete(url);
    return redirects;
  }

  private async storeCookies(headers: IncomingHttpHeaders, url: string): Promise<void> {
    const lines = setCookieLines(headers);
    if (lines.length > 0) await applyRedirectCookies(this.context, lines, new URL(url)).catch(() => undefined);
  }

  private async refuse(route: Route, url: string, reason: string): Promise<void> {
    const request = route.request();
    const shown = redactResource(url);
    this.session.record({ url: shown, reason, resourceType: request.resourceType() });
    if (isMainFrameNavigation(request)) this.session.noteNavigationProblem({ url: request.url(), refused: true, message: `${shown}: ${reason}` });
    await route.abort('blockedbyclient');
  }

  private refuseWebSocket(socket: WebSocketRoute): void {
    const url = socket.url();
    this.session.record({ url: redactResource(url), reason: this.session.grants.refusal(url) ?? WEBSOCKET_REFUSED, resourceType: 'websocket' });
    socket.close({ code: 1008, reason: 'refused by the sandbox' }).catch(() => undefined);
  }
}
