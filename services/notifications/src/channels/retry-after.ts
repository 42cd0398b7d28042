/**
 * A Retry-After header in milliseconds from `now`: delta-seconds or an HTTP date. Absent,
 * malformed or in the past: undefined (the outbox's own backoff applies).
 */
export function retryAfterMs(header: string | string[] | undefined | null, now: Date): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1_000;
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  const delta = at - now.getTime();
  return delta > 0 ? delta : undefined;
}
