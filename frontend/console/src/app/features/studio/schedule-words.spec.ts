import { scheduleInWords } from './schedule-words';

describe(scheduleInWords.name, () => {
  it('says a template without a schedule is started on demand', () => {
    expect(scheduleInWords(null)).toBe('Started on demand');
    expect(scheduleInWords('  ')).toBe('Started on demand');
  });

  it('reads the schedules the templates ship with', () => {
    expect(scheduleInWords('*/15 * * * *')).toBe('Every 15 minutes');
    expect(scheduleInWords('0 9 * * 1-5')).toBe('Every weekday at 09:00');
    expect(scheduleInWords('0 8 * * 1-5')).toBe('Every weekday at 08:00');
    expect(scheduleInWords('0 16 * * 5')).toBe('Every Friday at 16:00');
  });

  it('reads daily, hourly, monthly and several-day schedules', () => {
    expect(scheduleInWords('30 7 * * *')).toBe('Every day at 07:30');
    expect(scheduleInWords('0 * * * *')).toBe('Every hour, on the hour');
    expect(scheduleInWords('5 * * * *')).toBe('Every hour at minute 5');
    expect(scheduleInWords('0 */6 * * *')).toBe('Every 6 hours at minute 0');
    expect(scheduleInWords('0 12 1 * *')).toBe('On day 1 of every month at 12:00');
    expect(scheduleInWords('0 10 * * 1,3,5')).toBe('Every Monday, Wednesday and Friday at 10:00');
    expect(scheduleInWords('0 10 * * 0,6')).toBe('Every Saturday and Sunday at 10:00');
    expect(scheduleInWords('* * * * *')).toBe('Every minute');
  });

  it('answers null for an expression it has no words for, rather than guessing', () => {
    expect(scheduleInWords('0 9 * 1 *')).toBeNull();
    expect(scheduleInWords('0 9-17 * * *')).toBeNull();
    expect(scheduleInWords('0 9 * * MON')).toBeNull();
    expect(scheduleInWords('not a cron')).toBeNull();
  });
});
