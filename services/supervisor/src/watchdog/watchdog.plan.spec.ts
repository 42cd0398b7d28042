import { countByCause, findingKey, MAX_FAILED_WAKES, planSweep, type Finding, type Observation, type SweepInput, type WakeOutcome } from './watchdog.plan';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const GRACE_MS = 30_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms);

function given(previous: Finding[] = [], wakes: Record<string, WakeOutcome> = {}, unchecked: string[] = []) {
  return {
    when(...observed: Observation[]) {
      const input: SweepInput = {
        now: NOW,
        graceMs: GRACE_MS,
        observed,
        previous: new Map(previous.map((finding) => [findingKey(finding.runId, finding.cause), finding])),
        unchecked: new Set(unchecked),
        wakes: new Map(Object.entries(wakes)),
      };
      return planSweep(input);
    },
  };
}

const unclaimed = (runId: string, ageMs: number): Observation => ({ cause: 'unclaimed', runId, workspaceId: 'ws1', admittedAt: ago(ageMs) });
const finding = (runId: string, overrides: Partial<Finding> = {}): Finding => ({
  runId,
  workspaceId: 'ws1',
  cause: 'unclaimed',
  detail: 'admitted and never claimed',
  firstSeenAt: ago(60_000),
  wakes: 1,
  failedWakes: 0,
  attentionId: null,
  ...overrides,
});

describe(planSweep.name, () => {
  it('leaves a run admitted within the grace alone: its wake may still be on its way', () => {
    const sut = given().when(unclaimed('r1', GRACE_MS - 1));
    expect(sut).toEqual({ findings: [], actions: [], resolved: [] });
  });

  it('counts a run admitted past the grace without a claim and wakes it', () => {
    const sut = given().when(unclaimed('r1', GRACE_MS + 1));
    expect(sut.findings).toEqual([expect.objectContaining({ runId: 'r1', cause: 'unclaimed', wakes: 1, failedWakes: 0, firstSeenAt: NOW })]);
    expect(sut.actions).toEqual([{ kind: 'wake', runId: 'r1', workspaceId: 'ws1' }]);
  });

  it('does not wake a run again while the last wake is still under way', () => {
    const sut = given([finding('r1')], { r1: 'pending' }).when(unclaimed('r1', 90_000));
    expect(sut.actions).toEqual([]);
    expect(sut.findings[0]).toMatchObject({ wakes: 1, failedWakes: 0 });
  });

  it('wakes again after a busy replica without counting it against the run', () => {
    const sut = given([finding('r1')], { r1: 'busy' }).when(unclaimed('r1', 90_000));
    expect(sut.actions).toEqual([{ kind: 'wake', runId: 'r1', workspaceId: 'ws1' }]);
    expect(sut.findings[0]).toMatchObject({ wakes: 2, failedWakes: 0 });
  });

  it('counts a wake that ran and left the run without an owner as failed', () => {
    const sut = given([finding('r1')], { r1: 'done' }).when(unclaimed('r1', 90_000));
    expect(sut.findings[0]).toMatchObject({ wakes: 2, failedWakes: 1 });
  });

  it(`asks a person once, and stops waking, after ${MAX_FAILED_WAKES} wakes that did not help`, () => {
    const sut = given([finding('r1', { wakes: MAX_FAILED_WAKES, failedWakes: MAX_FAILED_WAKES - 1 })], { r1: 'failed' }).when(unclaimed('r1', 90_000));
    expect(sut.actions).toEqual([
      {
        kind: 'raise',
        key: findingKey('r1', 'unclaimed'),
        runId: 'r1',
        workspaceId: 'ws1',
        attention: { kind: 'run_without_owner', verb: 'watchdog', arguments: { cause: 'unclaimed', reason: `admitted at ${ago(90_000).toISOString()} and never claimed by a supervisor; waking it did not help` } },
      },
    ]);
    const again = given([{ ...sut.findings[0]!, attentionId: 'att-1' }]).when(unclaimed('r1', 95_000));
    expect(again.actions).toEqual([]);
    expect(again.findings).toEqual([expect.objectContaining({ attentionId: 'att-1', failedWakes: MAX_FAILED_WAKES })]);
  });

  it('counts a lapsed lease past the grace and leaves the takeover to the recovery sweep', () => {
    const sut = given().when(
      { cause: 'lapsed', runId: 'r1', workspaceId: 'ws1', lapsedAt: ago(GRACE_MS + 1), holder: 'replica-a' },
      { cause: 'lapsed', runId: 'r2', workspaceId: 'ws1', lapsedAt: ago(1_000), holder: 'replica-b' },
    );
    expect(sut.findings.map((f) => [f.runId, f.cause])).toEqual([['r1', 'lapsed']]);
    expect(sut.actions).toEqual([]);
  });

  it('asks a person at once about a wait whose attention record is gone, with the record named', () => {
    const sut = given().when({ cause: 'wait_lost', runId: 'r1', workspaceId: 'ws1', attentionId: 'att-9' });
    expect(sut.actions).toEqual([
      expect.objectContaining({
        kind: 'raise',
        attention: { kind: 'wait_lost', verb: 'watchdog', arguments: { cause: 'wait_lost', attentionId: 'att-9', reason: 'waits on attention att-9, which policy no longer has: no answer can wake it' } },
      }),
    ]);
  });

  it('wakes a run still waiting on an attention answered past the grace, not one answered just now', () => {
    const answered = (runId: string, ageMs: number): Observation => ({ cause: 'wait_answered', runId, workspaceId: 'ws1', attentionId: `att-${runId}`, state: 'approved', answeredAt: ago(ageMs) });
    const sut = given().when(answered('r1', GRACE_MS + 1), answered('r2', 10));
    expect(sut.actions).toEqual([{ kind: 'wake', runId: 'r1', workspaceId: 'ws1' }]);
    expect(sut.findings.map((f) => f.runId)).toEqual(['r1']);
  });

  it('asks about a quarantined run with the request the supervisor makes when it quarantines, so policy answers that record', () => {
    const sut = given().when({ cause: 'quarantined', runId: 'r1', workspaceId: 'ws1', reason: 'event at version 3 does not match its digest' });
    expect(sut.actions).toEqual([
      expect.objectContaining({ kind: 'raise', attention: { kind: 'run_quarantined', verb: 'replay', arguments: { reason: 'event at version 3 does not match its digest' } } }),
    ]);
  });

  it('drops the finding whose cause is gone, and keeps the one that could not be checked', () => {
    const lost = finding('r2', { cause: 'wait_lost', attentionId: 'att-2' });
    const sut = given([finding('r1'), lost], {}, [findingKey('r2', 'wait_lost')]).when();
    expect(sut.resolved).toEqual([findingKey('r1', 'unclaimed')]);
    expect(sut.findings).toEqual([lost]);
  });
});

describe(countByCause.name, () => {
  it('reads 0 for every cause when nothing was found', () => {
    expect(countByCause([])).toEqual({ unclaimed: 0, lapsed: 0, wait_lost: 0, wait_answered: 0, quarantined: 0 });
  });
});
