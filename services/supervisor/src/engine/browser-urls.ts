import type { PinnedRun } from '../run/run.intent';

/**
 * URL patterns the run's browser grants name: a page may load only what they cover. A grant
 * without resources covers any http(s) URL (`*`), as it does for the tool call itself; the
 * public-address checks apply either way.
 */
export function browserUrlsOf(pinned: Pick<PinnedRun, 'definition'>): string[] {
  const grants = pinned.definition.tools.filter((grant) => grant.tool === 'browser');
  if (grants.some((grant) => grant.resources === undefined)) return ['*'];
  return [...new Set(grants.flatMap((grant) => grant.resources ?? []))];
}
