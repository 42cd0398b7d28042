import { CronSchedule } from '../cron/cron-schedule';
import { planTick } from './tick-plan';

const hourly = CronSchedule.parse('0 * * * *', 'UTC');
const limits = { toleranceMs: 60_000, maxCatchUpMs: 24 * 3_600_000 };
const at = (text: string) => new Date(text);

describe(planTick.name, () => {
  it('fires the due instant on time and moves to the next one', () => {
    const sut = planTick(hourly, { nextDueAt: at('2026-06-01T10:00:00Z'), missed: 'skip' }, at('2026-06-01T10:00:00.020Z'), limits);
    expect(sut).toEqual({ fire: at('2026-06-01T10:00:00Z'), nextDueAt: at('2026-06-01T11:00:00Z'), dropped: null });
  });

  it('fires an instant that is late within the tolerance, under either policy', () => {
    for (const missed of ['skip', 'fire_once'] as const) {
      const sut = planTick(hourly, { nextDueAt: at('2026-06-01T10:00:00Z'), missed }, at('2026-06-01T10:01:00Z'), limits);
      expect(sut.fire).toEqual(at('2026-06-01T10:00:00Z'));
    }
  });

  it('skips every missed instant older than the tolerance when the policy is skip', () => {
    const sut = planTick(hourly, { nextDueAt: at('2026-06-01T07:00:00Z'), missed: 'skip' }, at('2026-06-01T10:10:00Z'), limits);
    expect(sut).toEqual({ fire: null, nextDueAt: at('2026-06-01T11:00:00Z'), dropped: 'late' });
  });

  it('fires only the most recent missed instant when the policy is fire_once', () => {
    const sut = planTick(hourly, { nextDueAt: at('2026-06-01T07:00:00Z'), missed: 'fire_once' }, at('2026-06-01T10:10:00Z'), limits);
    expect(sut).toEqual({ fire: at('2026-06-01T10:00:00Z'), nextDueAt: at('2026-06-01T11:00:00Z'), dropped: null });
  });

  it('does not catch up an instant older than the catch-up limit', () => {
    const daily = CronSchedule.parse('0 9 * * *', 'UTC');
    const sut = planTick(daily, { nextDueAt: at('2026-06-01T09:00:00Z'), missed: 'fire_once' }, at('2026-06-03T08:00:00Z'), { ...limits, maxCatchUpMs: 3_600_000 });
    expect(sut).toEqual({ fire: null, nextDueAt: at('2026-06-03T09:00:00Z'), dropped: 'too_old' });
  });

  it('changes nothing when the schedule is not due yet', () => {
    const sut = planTick(hourly, { nextDueAt: at('2026-06-01T11:00:00Z'), missed: 'fire_once' }, at('2026-06-01T10:59:59.999Z'), limits);
    expect(sut).toEqual({ fire: null, nextDueAt: at('2026-06-01T11:00:00Z'), dropped: null });
  });
});
