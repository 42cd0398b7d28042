/**
 * Conversions between instants and local wall-clock times of an IANA time zone.
 *
 * A wall-clock time is represented as the epoch milliseconds of the same calendar fields read
 * as UTC ("naive" time): 02:30 local on 2026-03-29 is Date.UTC(2026, 2, 29, 2, 30). Naive times
 * are ordered like the calendar, which lets cron matching run in plain UTC arithmetic.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** Whether the runtime knows the IANA zone. */
export function isKnownTimezone(timezone: string): boolean {
  try {
    formatterFor(timezone);
    return true;
  } catch {
    return false;
  }
}

/** The naive wall-clock time an instant shows in `timezone`. */
export function wallClock(instantMs: number, timezone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(timezone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const millis = ((instantMs % 1_000) + 1_000) % 1_000;
  return Date.UTC(fields['year']!, fields['month']! - 1, fields['day']!, fields['hour']!, fields['minute']!, fields['second']!) + millis;
}

/** The zone's UTC offset at an instant, in milliseconds (Paris in summer: +7 200 000). */
export function offsetAt(instantMs: number, timezone: string): number {
  return wallClock(instantMs, timezone) - instantMs;
}

/**
 * The instant a naive wall-clock time denotes, with daylight-saving transitions resolved
 * one way, on purpose:
 * - a time that occurs twice (clocks set back) is its first occurrence;
 * - a time that does not occur (clocks set forward) is the first valid instant after it,
 *   which is the transition itself (02:30 on a spring-forward night in Paris is 03:00 CEST).
 * The result never decreases as the naive time increases.
 */
export function resolveWallClock(naiveMs: number, timezone: string): number {
  const before = offsetAt(naiveMs - DAY_MS, timezone);
  const after = offsetAt(naiveMs + DAY_MS, timezone);
  const candidates = (before === after ? [before] : [before, after])
    .map((offset) => naiveMs - offset)
    .filter((instant) => wallClock(instant, timezone) === naiveMs)
    .sort((a, b) => a - b);
  if (candidates.length) return candidates[0]!;
  // A gap: wall time jumps over naiveMs somewhere in (lo, hi]; find the first instant past it.
  let lo = naiveMs - Math.max(before, after);
  let hi = naiveMs - Math.min(before, after);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (wallClock(mid, timezone) > naiveMs) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * An upper bound of the naive times shown at or before `instantMs`: after clocks are set back,
 * the wall clock has already shown later times than it shows now.
 */
export function latestWallClockUpTo(instantMs: number, timezone: string): number {
  return instantMs + Math.max(offsetAt(instantMs, timezone), offsetAt(instantMs - DAY_MS, timezone));
}
