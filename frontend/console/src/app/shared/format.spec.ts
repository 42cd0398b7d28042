import { countdown, formatBudgetAmount, formatUsd, runStateTone } from './format';

describe(countdown.name, () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('counts minutes and seconds down to a near deadline', () => {
    expect(countdown('2026-01-01T00:02:05Z', now)).toEqual({ text: '2m 05s left', overdue: false });
  });

  it('says how late an overdue deadline is', () => {
    expect(countdown('2025-12-31T23:59:50Z', now)).toEqual({ text: 'overdue by 0m 10s', overdue: true });
  });

  it('switches to hours and days for far deadlines', () => {
    expect(countdown('2026-01-01T03:04:00Z', now).text).toBe('3h 04m left');
    expect(countdown('2026-01-03T05:00:00Z', now).text).toBe('2d 5h left');
  });
});

describe(formatUsd.name, () => {
  it('shows fractions of a cent rather than $0.00', () => {
    expect(formatUsd(0.004629)).toBe('$0.004629');
    expect(formatUsd(1.5)).toBe('$1.50');
    expect(formatUsd(null)).toBe('—');
  });
});

describe(formatBudgetAmount.name, () => {
  it('reads usd amounts as micro-dollars and other units as counts', () => {
    expect(formatBudgetAmount('usd', 250_000)).toBe('$0.25');
    expect(formatBudgetAmount('count:slack_post', 1)).toBe('1 call');
  });
});

describe(runStateTone.name, () => {
  it('colours success ok, waiting warn, running neutral and other ends bad', () => {
    expect(['succeeded', 'waiting', 'running', 'timed_out', 'some_future_state'].map(runStateTone)).toEqual(['ok', 'warn', 'neutral', 'bad', 'bad']);
  });
});
