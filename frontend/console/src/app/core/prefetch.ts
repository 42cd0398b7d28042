/**
 * Answers asked for before Angular has even booted (src/early-fetch.js) for the page the browser
 * opened: the caller (every page's guard asks for it) and, on a workspace overview, the overview
 * itself. Without them, the landing page's data waits for the bundle, then the guard's answer,
 * then the page: three round trips in a row. A prefetched answer is handed out once, to the
 * first GET of the same path within a few seconds; anything later asks the server again.
 */
interface Held {
  at: number;
  responses: Record<string, Promise<Response> | undefined>;
}

interface EarlyFetch {
  paths(pathname: string): string[];
  prefetch(pathname: string, fetcher: typeof fetch, now: number): Held;
  held?: Held;
}

const FRESH_MS = 5_000;

function early(): EarlyFetch | undefined {
  return (globalThis as { paEarlyFetch?: EarlyFetch }).paEarlyFetch;
}

/** The prefetched answer for `path`, once; null when there is none or it is stale. */
export function takePrefetched(path: string, now = Date.now()): Promise<Response> | null {
  const held = early()?.held;
  const response = held?.responses[path];
  if (!held || !response) return null;
  delete held.responses[path];
  return now - held.at <= FRESH_MS ? response : null;
}
