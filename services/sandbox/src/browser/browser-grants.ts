import { normaliseResource, resourceCovers } from '@packetagent/contracts';

const WEBSOCKET_SCHEMES: Readonly<Record<string, string>> = { 'ws:': 'http:', 'wss:': 'https:' };

/** What the caller sends for a browser grant that names no resources. */
export const ANY_URL = '*';

export const NOT_GRANTED = "not covered by the run's browser grants";

/**
 * The run's browser grants, checked the way policy checks a browser call: the URL as the WHATWG
 * parser serialises it, cut at the query, normalised as a grant resource, then covered by one
 * of the grants.
 */
export class BrowserGrants {
  private readonly patterns: readonly string[];
  /** `*`: a grant without resources, which covers any http(s) URL (the address checks still apply). */
  private readonly anyUrl: boolean;

  constructor(allowedUrls: readonly string[]) {
    this.anyUrl = allowedUrls.includes(ANY_URL);
    this.patterns = allowedUrls.flatMap((raw) => {
      const checked = normaliseResource('browser', raw);
      return checked.ok ? [checked.value] : [];
    });
  }

  /** Why the page may not request `raw`, or null when a grant covers it. WebSocket URLs are checked as their http(s) equivalent. */
  refusal(raw: string): string | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'not a valid URL';
    }
    const scheme = WEBSOCKET_SCHEMES[url.protocol] ?? url.protocol;
    if (scheme !== 'http:' && scheme !== 'https:') return `the ${url.protocol.slice(0, -1)} scheme is not allowed`;
    if (url.username || url.password) return 'credentials in the URL are not allowed';
    const checked = normaliseResource('browser', `${scheme}//${url.host}${url.pathname}`);
    if (!checked.ok) return `the URL cannot be checked against the grants: ${checked.message}`;
    if (this.anyUrl) return null;
    return this.patterns.some((granted) => resourceCovers('browser', granted, checked.value)) ? null : NOT_GRANTED;
  }
}
