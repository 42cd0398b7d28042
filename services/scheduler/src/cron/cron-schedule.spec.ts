import { CronSchedule, InvalidCronError } from './cron-schedule';

const iso = (dates: Date[]) => dates.map((date) => date.toISOString());
const at = (text: string) => new Date(text);

describe(CronSchedule.name, () => {
  describe('Europe/Paris, spring forward on 2026-03-29 (02:00 CET becomes 03:00 CEST at 01:00Z)', () => {
    const paris = (expression: string) => CronSchedule.parse(expression, 'Europe/Paris');

    it('fires a nonexistent local time once, at the first valid instant after it', () => {
      expect(iso(paris('30 2 * * *').dueInstants(at('2026-03-28T00:00:00Z'), at('2026-03-31T00:00:00Z')))).toEqual([
        '2026-03-28T01:30:00.000Z', // 02:30 CET
        '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST
        '2026-03-30T00:30:00.000Z', // 02:30 CEST
      ]);
    });

    it('fires several nonexistent times of the gap once, together', () => {
      expect(iso(paris('15,45 2 * * *').dueInstants(at('2026-03-28T23:00:00Z'), at('2026-03-29T03:00:00Z')))).toEqual(['2026-03-29T01:00:00.000Z']);
    });

    it('fires hourly without a duplicate at the transition', () => {
      expect(iso(paris('0 * * * *').dueInstants(at('2026-03-28T23:30:00Z'), at('2026-03-29T03:30:00Z')))).toEqual([
        '2026-03-29T00:00:00.000Z', // 01:00 CET
        '2026-03-29T01:00:00.000Z', // 02:00 (missing) and 03:00 CEST are the same instant
        '2026-03-29T02:00:00.000Z', // 04:00 CEST
        '2026-03-29T03:00:00.000Z', // 05:00 CEST
      ]);
    });

    it('fires every quarter hour, the missing quarters once at 03:00 CEST', () => {
      expect(iso(paris('*/15 * * * *').dueInstants(at('2026-03-29T00:30:00Z'), at('2026-03-29T01:30:00Z')))).toEqual([
        '2026-03-29T00:45:00.000Z', // 01:45 CET
        '2026-03-29T01:00:00.000Z', // 02:00-02:45 (missing) and 03:00 CEST
        '2026-03-29T01:15:00.000Z',
        '2026-03-29T01:30:00.000Z',
      ]);
    });

    it('finds the latest and the next instant across the gap', () => {
      expect(paris('30 2 * * *').latestIn(at('2026-03-28T12:00:00Z'), at('2026-03-29T01:00:00Z'))?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
      expect(paris('30 2 * * *').latestIn(at('2026-03-28T12:00:00Z'), at('2026-03-29T00:59:59Z'))).toBeNull();
      expect(paris('30 2 * * *').nextAfter(at('2026-03-28T01:30:00Z'))?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
      expect(paris('*/15 * * * *').latestIn(at('2026-03-29T00:50:00Z'), at('2026-03-29T01:05:00Z'))?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
    });
  });

  describe('Europe/Paris, fall back on 2026-10-25 (03:00 CEST becomes 02:00 CET at 01:00Z)', () => {
    const paris = (expression: string) => CronSchedule.parse(expression, 'Europe/Paris');

    it('fires a repeated local time once, at its first occurrence', () => {
      expect(iso(paris('30 2 * * *').dueInstants(at('2026-10-24T00:00:00Z'), at('2026-10-27T00:00:00Z')))).toEqual([
        '2026-10-24T00:30:00.000Z', // 02:30 CEST
        '2026-10-25T00:30:00.000Z', // 02:30 CEST; 02:30 CET (01:30Z) does not fire
        '2026-10-26T01:30:00.000Z', // 02:30 CET
      ]);
    });

    it('fires hourly once per local hour, so the repeated 02:00 does not fire again', () => {
      expect(iso(paris('0 * * * *').dueInstants(at('2026-10-24T23:30:00Z'), at('2026-10-25T03:30:00Z')))).toEqual([
        '2026-10-25T00:00:00.000Z', // 02:00 CEST
        '2026-10-25T02:00:00.000Z', // 03:00 CET
        '2026-10-25T03:00:00.000Z', // 04:00 CET
      ]);
    });

    it('fires every quarter hour of the repeated hour once', () => {
      expect(iso(paris('*/15 * * * *').dueInstants(at('2026-10-25T00:30:00Z'), at('2026-10-25T02:15:00Z')))).toEqual([
        '2026-10-25T00:45:00.000Z', // 02:45 CEST
        '2026-10-25T02:00:00.000Z', // 03:00 CET; 02:00-02:45 CET are repeats
        '2026-10-25T02:15:00.000Z',
      ]);
    });

    it('finds the latest and the next instant across the repeated hour', () => {
      expect(paris('30 2 * * *').latestIn(at('2026-10-25T00:00:00Z'), at('2026-10-25T01:45:00Z'))?.toISOString()).toBe('2026-10-25T00:30:00.000Z');
      expect(paris('0 * * * *').latestIn(at('2026-10-25T00:00:00Z'), at('2026-10-25T01:59:59Z'))).toBeNull();
      expect(paris('0 * * * *').nextAfter(at('2026-10-25T00:00:00Z'))?.toISOString()).toBe('2026-10-25T02:00:00.000Z');
      expect(paris('30 2 * * *').nextAfter(at('2026-10-25T00:30:00Z'))?.toISOString()).toBe('2026-10-26T01:30:00.000Z');
    });
  });

  it('reads six fields as seconds first', () => {
    expect(iso(CronSchedule.parse('* * * * * *', 'UTC').dueInstants(at('2026-01-01T00:00:00.500Z'), at('2026-01-01T00:00:03Z')))).toEqual([
      '2026-01-01T00:00:01.000Z',
      '2026-01-01T00:00:02.000Z',
      '2026-01-01T00:00:03.000Z',
    ]);
  });

  it('counts the window as (after, until]', () => {
    const sut = CronSchedule.parse('0 9 * * 1-5', 'America/New_York');
    expect(iso(sut.dueInstants(at('2026-01-05T14:00:00Z'), at('2026-01-06T14:00:00Z')))).toEqual(['2026-01-06T14:00:00.000Z']);
    expect(sut.latestIn(at('2026-01-05T14:00:00Z'), at('2026-01-06T13:59:59Z'))).toBeNull();
    expect(sut.nextAfter(at('2026-01-06T14:00:00Z'))?.toISOString()).toBe('2026-01-07T14:00:00.000Z');
  });

  it('agrees with itself: latestIn is the last due instant and nextAfter the first', () => {
    const cases: [string, string][] = [
      ['*/20 * * * *', 'Europe/Paris'],
      ['30 2 * * *', 'America/New_York'],
      ['0 */3 * * *', 'Australia/Lord_Howe'],
      ['45 1 * * 0', 'America/Santiago'],
      ['0 0 1 * *', 'Asia/Kolkata'],
    ];
    for (const [expression, timezone] of cases) {
      const sut = CronSchedule.parse(expression, timezone);
      // Overlapping windows over a whole year, so every transition of these zones is inside one.
      for (let start = Date.parse('2026-01-01T00:00:00Z'); start < Date.parse('2027-01-01T00:00:00Z'); start += 2 * 86_400_000) {
        const after = new Date(start);
        const until = new Date(start + 2 * 86_400_000 + 3_600_000);
        const due = sut.dueInstants(after, until);
        expect([expression, timezone, after.toISOString(), sut.latestIn(after, until)?.toISOString() ?? null]).toEqual([
          expression, timezone, after.toISOString(), due[due.length - 1]?.toISOString() ?? null,
        ]);
        expect([expression, timezone, after.toISOString(), sut.nextAfter(after)?.toISOString()]).toEqual([
          expression, timezone, after.toISOString(), (due[0] ?? sut.nextAfter(until))?.toISOString(),
        ]);
        expect(due.every((instant, index) => index === 0 || instant.getTime() > due[index - 1]!.getTime())).toBe(true);
      }
    }
  });

  it('refuses an unknown zone or a malformed expression, naming the field', () => {
    expect(() => CronSchedule.parse('* * * * *', 'Mars/Olympus')).toThrow(InvalidCronError);
    expect(() => CronSchedule.parse('* * * * *', 'Mars/Olympus')).toThrow(expect.objectContaining({ issues: [expect.objectContaining({ path: 'timezone' })] }));
    expect(() => CronSchedule.parse('not a cron', 'UTC')).toThrow(expect.objectContaining({ code: 'invalid_cron', issues: [expect.objectContaining({ path: 'expression' })] }));
  });

  it('answers null when the expression has no instant left', () => {
    expect(CronSchedule.parse('0 0 30 2 *', 'UTC').nextAfter(at('2026-01-01T00:00:00Z'))).toBeNull();
  });
});
