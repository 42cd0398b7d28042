import { retryDelayMs } from './backoff';

const policy = { baseMs: 1_000, maxMs: 60_000 };

describe(retryDelayMs.name, () => {
  it('doubles the step with each retry, keeping half of it fixed and jittering the rest', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, () => 0))).toEqual([500, 1_000, 2_000, 4_000]);
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(policy, attempt, () => 0.999999))).toEqual([999, 1_999, 3_999, 7_999]);
  });

  it('never waits longer than the cap', () => {
    expect(retryDelayMs(policy, 40, () => 0.999999)).toBeLessThanOrEqual(60_000);
    expect(retryDelayMs(policy, 40, () => 0)).toBe(30_000);
  });

  it('waits at least as long as the receiver asked, even past the cap', () => {
    expect(retryDelayMs(policy, 1, () => 0, 5_000)).toBe(5_000);
    expect(retryDelayMs(policy, 1, () => 0, 10 * 60_000)).toBe(10 * 60_000);
    expect(retryDelayMs(policy, 3, () => 0, 100)).toBe(2_000);
  });
});
