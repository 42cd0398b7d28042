import { scopeLimits, usdToMicros, windowLengthMs, workspaceDailyLimit } from './scope-limits';

describe(scopeLimits.name, () => {
  it('maps every declared budget to its scope kind, unit and window in micro-dollars or counts', () => {
    const sut = scopeLimits({
      perRunUsd: 0.5,
      perDeploymentHourlyUsd: 1,
      perDeploymentDailyUsd: 5,
      perDeployment30DayUsd: 100,
      perWorkspaceDailyUsd: 20,
      actions: { slack_post: { perRun: 2, perDay: 10 }, http_fetch: { perDay: 50 } },
    });

    expect(sut.run).toEqual([
      { unit: 'usd', window: 'run', limit: 500_000 },
      { unit: 'count:slack_post', window: 'run', limit: 2 },
    ]);
    expect(sut.deployment).toEqual([
      { unit: 'usd', window: 'hour', limit: 1_000_000 },
      { unit: 'usd', window: 'day', limit: 5_000_000 },
      { unit: 'usd', window: '30d', limit: 100_000_000 },
      { unit: 'count:http_fetch', window: 'day', limit: 50 },
      { unit: 'count:slack_post', window: 'day', limit: 10 },
    ]);
    expect(sut.workspace).toEqual([{ unit: 'usd', window: 'day', limit: 20_000_000 }]);
  });

  it('declares nothing when the budgets are absent or not an object', () => {
    expect(scopeLimits(undefined)).toEqual({ run: [], deployment: [], workspace: [] });
    expect(scopeLimits('nonsense')).toEqual({ run: [], deployment: [], workspace: [] });
  });
});

describe(usdToMicros.name, () => {
  it('rounds to whole micro-dollars so no float reaches the ledger', () => {
    expect(usdToMicros(0.1 + 0.2)).toBe(300_000);
    expect(usdToMicros(0.0000014)).toBe(1);
  });
});

describe(workspaceDailyLimit.name, () => {
  it('takes the most restrictive declaration and null when none declares one', () => {
    expect(workspaceDailyLimit([{ perWorkspaceDailyUsd: 10 }, {}, { perWorkspaceDailyUsd: 4 }])).toBe(4_000_000);
    expect(workspaceDailyLimit([{}, { perRunUsd: 1 }])).toBeNull();
  });
});

describe(windowLengthMs.name, () => {
  it('gives rolling windows a length and the run window none', () => {
    expect(windowLengthMs('hour')).toBe(3_600_000);
    expect(windowLengthMs('30d')).toBe(2_592_000_000);
    expect(windowLengthMs('run')).toBeNull();
  });
});
