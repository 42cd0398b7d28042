import type { TriggerBinding } from '@packetagent/contracts';
import { desiredSchedules } from './cron-bindings';

const cron = (triggerId: string, expression: string, timezone = 'UTC', missed: 'skip' | 'fire_once' = 'skip'): TriggerBinding => ({
  triggerId, key: `cron:${expression}`, kind: 'cron', cron: { expression, timezone, missed },
});

describe(desiredSchedules.name, () => {
  it('schedules each cron binding from the first instant after the event and ignores other kinds', () => {
    const sut = desiredSchedules(
      [cron('t1', '0 9 * * 1-5', 'Europe/Paris', 'fire_once'), { triggerId: 'w1', key: 'webhook', kind: 'webhook' }],
      new Date('2026-06-01T06:59:00Z'),
    );
    expect(sut).toEqual({
      schedules: [{ triggerId: 't1', expression: '0 9 * * 1-5', timezone: 'Europe/Paris', missed: 'fire_once', firstDueAt: new Date('2026-06-01T07:00:00Z') }],
      rejected: [],
    });
  });

  it('reports a binding it cannot evaluate instead of scheduling it', () => {
    const sut = desiredSchedules([cron('bad', '0 9 * * *', 'Nowhere/City'), { triggerId: 'empty', key: 'cron', kind: 'cron' }, cron('ok', '* * * * *')], new Date('2026-06-01T00:00:00Z'));
    expect(sut.schedules.map((schedule) => schedule.triggerId)).toEqual(['ok']);
    expect(sut.rejected).toEqual([
      { triggerId: 'bad', issues: [expect.objectContaining({ path: 'timezone' })] },
      { triggerId: 'empty', issues: [expect.objectContaining({ path: 'cron' })] },
    ]);
  });
});
