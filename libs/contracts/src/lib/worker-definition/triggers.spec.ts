import { cronProblem, timezoneProblem, triggerKey, triggerKind, type TriggerSpec } from './triggers';

const triggers: TriggerSpec[] = [
  { cron: '0 9 * * 1-5', timezone: 'Europe/Paris', missed: 'skip' },
  { webhook: {}, name: 'github-push' },
  { queue: { subject: 'orders.created' } },
  { alert: { names: ['HighErrorRate'], on: ['firing'] } },
  { manual: {} },
];

describe(triggerKind.name, () => {
  it('tells the kind from the key present', () => {
    expect(triggers.map(triggerKind)).toEqual(['cron', 'webhook', 'queue', 'alert', 'manual']);
  });
});

describe(triggerKey.name, () => {
  it('uses the name when there is one, else the kind and index', () => {
    expect(triggers.map((trigger, index) => triggerKey(trigger, index))).toEqual(['cron-0', 'github-push', 'queue-2', 'alert-3', 'manual-4']);
  });
});

describe(cronProblem.name, () => {
  it('accepts five and six fields in a time zone', () => {
    expect(cronProblem('0 9 * * 1-5', 'America/New_York')).toBeNull();
    expect(cronProblem('30 0 9 * * *', 'UTC')).toBeNull();
  });

  it('refuses nicknames, seven fields and dates that never come', () => {
    expect(cronProblem('@daily', 'UTC')).toBe('a cron expression has 5 fields (minute hour day month weekday) or 6 (with seconds first); got 1');
    expect(cronProblem('0 0 0 1 1 * 2030', 'UTC')).toBe('a cron expression has 5 fields (minute hour day month weekday) or 6 (with seconds first); got 7');
    expect(cronProblem('0 0 31 4 *', 'UTC')).toBe('the cron expression never fires');
  });
});

describe(timezoneProblem.name, () => {
  it('accepts IANA names and refuses others', () => {
    expect(timezoneProblem('America/Argentina/Buenos_Aires')).toBeNull();
    expect(timezoneProblem('UTC')).toBeNull();
    expect(timezoneProblem('Europe/Atlantis')).toBe('unknown time zone "Europe/Atlantis"');
    expect(timezoneProblem('UTC+2')).toBe('"UTC+2" is not an IANA time zone name (e.g. Europe/Paris, UTC)');
  });
});
