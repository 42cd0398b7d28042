import type { IncomingHttpHeaders } from 'node:http';

/** Hop-by-hop headers, and those the exchange sets itself (framing, host, encodings it can decode). */
const REQUEST_HEADERS_NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'accept-encoding',
]);

/** The body handed to Chromium is already decoded, and fulfil frames it itself. */
const RESPONSE_HEADERS_NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'trailer', 'content-encoding', 'content-length']);

/** The content-encodings the exchange decodes; Chromium offers more (zstd) than it can. */
const ACCEPTED_ENCODINGS = 'gzip, deflate, br';

/** The page's request headers as they are sent on by Node. */
export function forwardedRequestHeaders(pageHeaders: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(pageHeaders)) {
    const lower = name.toLowerCase();
    // HTTP/2 pseudo-headers (":authority") are not headers of an HTTP/1.1 request.
    if (lower.startsWith(':') || REQUEST_HEADERS_NOT_FORWARDED.has(lower)) continue;
    headers[lower] = value;
  }
  headers['accept-encoding'] = ACCEPTED_ENCODINGS;
  return headers;
}

/** Response headers as route.fulfill takes them: several Set-Cookie lines joined by newlines, as Playwright splits them. */
export function fulfilledResponseHeaders(responseHeaders: IncomingHttpHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(responseHeaders)) {
    if (value === undefined || RESPONSE_HEADERS_NOT_FORWARDED.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
  }
  return headers;
}

/** The Set-Cookie lines of a response. */
export function setCookieLines(responseHeaders: IncomingHttpHeaders): string[] {
  const value = responseHeaders['set-cookie'];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
