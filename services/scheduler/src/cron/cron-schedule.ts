import { Cron } from 'croner';
import { ValidationError } from '@packetagent/contracts';
import { isKnownTimezone, latestWallClockUpTo, resolveWallClock, wallClock } from './wall-clock';

export class InvalidCronError extends ValidationError {
  override readonly code = 'invalid_cron';
}

const SECOND_MS = 1_000;

/**
 * A cron expression (5 fields, or 6 with seconds first) in an IANA time zone, evaluated in
 * local wall-clock time and mapped to instants.
 *
 * Daylight-saving behaviour is ours, not the library's: croner only ever matches naive
 * (UTC-read) wall-clock times here, and `resolveWallClock` turns each match into an instant:
 * - a local time that does not exist (spring forward) fires once, at the first valid instant
 *   after it: `30 2 * * *` in Paris on 2026-03-29 fires at 03:00 CEST (01:00Z). Several
 *   missing times collapse into that one instant, which fires once;
 * - a local time that occurs twice (fall back) fires once, at its first occurrence: `30 2 * * *`
 *   on 2026-10-25 fires at 02:30 CEST (00:30Z) only, and `0 * * * *` does not fire at 02:00 CET.
 * Left to itself (with `timezone`), croner 11 is not consistent about either case: on the
 * spring-forward night it fires `30 2 * * *` at 03:00 CEST but `15,45 2 * * *` and
 * `0,30 2 * * *` not at all; on the fall-back night it fires `30 2 * * *` once but `0 * * * *`
 * twice, at 02:00 CEST and again at 02:00 CET.
 */
export class CronSchedule {
  private constructor(
    readonly expression: string,
    readonly timezone: string,
    private readonly pattern: Cron,
  ) {}

  static parse(expression: string, timezone: string): CronSchedule {
    if (!isKnownTimezone(timezone)) {
      throw new InvalidCronError('invalid cron trigger', [{ path: 'timezone', message: `unknown time zone "${timezone}"` }]);
    }
    let pattern: Cron;
    try {
      // A fixed zero offset, not timezone 'UTC': same matches, without a time-zone conversion per step.
      pattern = new Cron(expression, { utcOffset: 0, paused: true });
    } catch (error) {
      throw new InvalidCronError('invalid cron trigger', [
        { path: 'expression', message: error instanceof Error ? error.message : String(error) },
      ]);
    }
    return new CronSchedule(expression, timezone, pattern);
  }

  /** Instants in (after, until], ascending, at most `limit` of them. */
  dueInstants(after: Date, until: Date, limit = 10_000): Date[] {
    const result: Date[] = [];
    let naive = this.pattern.nextRun(new Date(wallClock(after.getTime(), this.timezone)));
    let last = Number.NEGATIVE_INFINITY;
    while (naive && result.length < limit) {
      const instant = resolveWallClock(naive.getTime(), this.timezone);
      if (instant > until.getTime()) break;
      if (instant > after.getTime() && instant !== last) {
        result.push(new Date(instant));
        last = instant;
      }
      naive = this.pattern.nextRun(naive);
    }
    return result;
  }

  /** The first instant strictly after `after`, or null when the expression has none. */
  nextAfter(after: Date): Date | null {
    let naive = this.pattern.nextRun(new Date(wallClock(after.getTime(), this.timezone)));
    while (naive) {
      const instant = resolveWallClock(naive.getTime(), this.timezone);
      if (instant > after.getTime()) return new Date(instant);
      naive = this.pattern.nextRun(naive);
    }
    return null;
  }

  /** The latest instant in (after, until], or null. */
  latestIn(after: Date, until: Date): Date | null {
    const upper = Math.floor(latestWallClockUpTo(until.getTime(), this.timezone) / SECOND_MS) * SECOND_MS;
    // previousRuns answers the latest match strictly before its reference second.
    let naive = this.pattern.previousRuns(1, new Date(upper + SECOND_MS))[0];
    while (naive) {
      const instant = resolveWallClock(naive.getTime(), this.timezone);
      if (instant <= until.getTime()) return instant > after.getTime() ? new Date(instant) : null;
      naive = this.pattern.previousRuns(1, naive)[0];
    }
    return null;
  }
}
