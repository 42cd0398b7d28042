import type { BrowserContext } from 'playwright-core';

type NewCookie = Parameters<BrowserContext['addCookies']>[0][number];
type SameSite = NonNullable<NewCookie['sameSite']>;

const SAME_SITE: Readonly<Record<string, SameSite>> = { strict: 'Strict', lax: 'Lax', none: 'None' };

/** RFC 6265 section 5.1.4: the directory of the request path. */
function defaultPath(url: URL): string {
  const last = url.pathname.lastIndexOf('/');
  return last <= 0 ? '/' : url.pathname.slice(0, last);
}

interface ParsedCookie {
  cookie: NewCookie;
  expired: boolean;
}

/**
 * One Set-Cookie line as Chromium would store it for `url`, or null when Chromium would refuse it.
 * The Domain attribute is not honoured: the cookie is kept for the responding host only, since
 * telling a registrable domain from a public suffix needs a list this service does not carry.
 */
function parseSetCookie(line: string, url: URL, nowSeconds: number): ParsedCookie | null {
  const [pair = '', ...attributes] = line.split(';');
  const equals = pair.indexOf('=');
  if (equals <= 0) return null;
  const cookie: NewCookie = { name: pair.slice(0, equals).trim(), value: pair.slice(equals + 1).trim(), domain: url.hostname, path: defaultPath(url) };
  let maxAge: number | undefined;
  let expires: number | undefined;
  for (const attribute of attributes) {
    const separator = attribute.indexOf('=');
    const key = (separator < 0 ? attribute : attribute.slice(0, separator)).trim().toLowerCase();
    const value = separator < 0 ? '' : attribute.slice(separator + 1).trim();
    if (key === 'path' && value.startsWith('/')) cookie.path = value;
    else if (key === 'secure') cookie.secure = true;
    else if (key === 'httponly') cookie.httpOnly = true;
    else if (key === 'samesite' && SAME_SITE[value.toLowerCase()]) cookie.sameSite = SAME_SITE[value.toLowerCase()];
    else if (key === 'max-age' && /^-?\d+$/.test(value)) maxAge = Number(value);
    else if (key === 'expires' && !Number.isNaN(Date.parse(value))) expires = Math.floor(Date.parse(value) / 1000);
  }
  if (cookie.secure && url.protocol !== 'https:') return null;
  if (cookie.sameSite === 'None' && !cookie.secure) return null;
  const expiry = maxAge !== undefined ? nowSeconds + maxAge : expires;
  if (expiry !== undefined) cookie.expires = expiry;
  return { cookie, expired: expiry !== undefined && expiry <= nowSeconds };
}

/**
 * Stores the cookies of a redirect the browser never sees: the redirect's answer is handled in
 * Node (a navigation is re-issued to its target), so its Set-Cookie lines are applied here.
 */
export async function applyRedirectCookies(context: BrowserContext, lines: readonly string[], url: URL, nowMs: number = Date.now()): Promise<void> {
  const nowSeconds = Math.floor(nowMs / 1000);
  const parsed = lines.map((line) => parseSetCookie(line, url, nowSeconds)).filter((entry): entry is ParsedCookie => entry !== null);
  for (const { cookie } of parsed.filter((entry) => entry.expired)) await context.clearCookies({ name: cookie.name, domain: cookie.domain, path: cookie.path });
  const fresh = parsed.filter((entry) => !entry.expired).map((entry) => entry.cookie);
  if (fresh.length > 0) await context.addCookies(fresh);
}
