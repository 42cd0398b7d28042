import { normaliseResource, redactResource, type JsonObject, type ToolName } from '@packetagent/contracts';
import type { z } from 'zod';

/** RFC 9110 token: what a header name may contain. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;

/** Header values are sent as given, so anything that could end the header line is refused. */
// eslint-disable-next-line no-control-regex
export const UNSAFE_HEADER_VALUE = /[\r\n\u0000]/;

/** Headers whose values are secrets for the purpose of records (not of policy). */
export function isSensitiveHeader(name: string): boolean {
  return /^(authorization|proxy-authorization|cookie|set-cookie)$/i.test(name) || /(token|secret|key|auth|session|password|signature)/i.test(name);
}

/** Headers from the model that the response shown back to it keeps. */
export const SHOWN_RESPONSE_HEADERS = ['content-type', 'retry-after', 'etag', 'last-modified'] as const;

export function shownHeaders(headers: Record<string, string | string[] | undefined>): JsonObject {
  const shown: JsonObject = {};
  for (const name of SHOWN_RESPONSE_HEADERS) {
    const value = headers[name];
    if (value !== undefined) shown[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return shown;
}

/** Whether a response body reads as text for the model. */
export function isTextual(contentType: string | undefined): boolean {
  if (!contentType) return true;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type.startsWith('text/') || /^application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|graphql|yaml|x-yaml|problem\+json|problem\+xml)$/.test(type) || /\+(json|xml)$/.test(type);
}

/**
 * Checks a concrete http(s) URL the way policy will read it: parsed by the WHATWG parser (which
 * is also what gets requested), without userinfo, and with an origin and path that the grant
 * normaliser accepts.
 */
export function checkHttpUrl(tool: ToolName, raw: string, ctx: z.RefinementCtx): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not an absolute URL' });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: `the scheme must be http or https, not ${url.protocol.slice(0, -1)}` });
    return;
  }
  if (url.username || url.password) {
    ctx.addIssue({ code: 'custom', message: 'credentials in the URL are not allowed; name a credential instead' });
    return;
  }
  const checked = normaliseResource(tool, `${url.protocol}//${url.host}${url.pathname}`);
  if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
}

/** The URL as it is requested and as policy sees it: WHATWG serialisation, fragment dropped. */
export function canonicalUrl(raw: string): string {
  const url = new URL(raw);
  url.hash = '';
  return url.href;
}

/** A URL for summaries and error messages: no userinfo, query values and fragment hidden. */
export function displayUrl(raw: string): string {
  return redactResource(raw);
}
