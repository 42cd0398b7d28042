import type { RunEvent } from '../../shared/timeline';
import { formatDuration, formatSeconds, runMeters, tokensUsed } from './run-meters';
import type { RunSummary } from './runs.api';

const summary = (changes: Partial<RunSummary> = {}): RunSummary => ({
  runId: 'r1',
  deploymentId: 'd1',
  workerName: 'reporter',
  version: 1,
  state: 'running',
  phase: 'plan',
  iteration: 3,
  toolCalls: 1,
  costUsd: 0.5,
  bounds: { maxWallSeconds: 600, maxIterations: 10, maxToolCalls: 4, maxCostUsd: 2 },
  remaining: null,
  waitingOn: null,
  lastCheckpoint: null,
  outcome: null,
  model: null,
  createdAt: '2026-11-30T08:00:00.000Z',
  startedAt: '2026-11-30T08:00:00.000Z',
  endedAt: null,
  ...changes,
});

const turn = (input: number, output: number): RunEvent => ({ id: 'e', position: 1, type: 'run.model_turn', streamVersion: 1, occurredAt: '', actor: null, data: { usage: { inputTokens: input, outputTokens: output } } });

describe(runMeters.name, () => {
  it('shows each bound as used of limit with its share', () => {
    const sut = runMeters(summary(), [turn(100, 20), turn(50, 5)], Date.parse('2026-11-30T08:01:05.000Z'));

    expect(sut.map((m) => [m.label, m.text, m.ratio])).toEqual([
      ['Steps (model turns)', '3 of 10', 0.3],
      ['Tool calls', '1 of 4', 0.25],
      ['Tokens', '175 (no limit)', null],
      ['Cost', '$0.50 of $2.00', 0.25],
      ['Wall time', '1m 05s of 10m 00s', 65 / 600],
    ]);
  });

  it('measures wall time to the end of an ended run, caps shares at full and shows unlimited cost', () => {
    const sut = runMeters(summary({ iteration: 12, endedAt: '2026-11-30T08:00:30.000Z', bounds: { maxWallSeconds: 600, maxIterations: 10, maxToolCalls: 4, maxCostUsd: null } }), [], Date.parse('2026-12-01T00:00:00Z'));
    expect(sut[0]!.ratio).toBe(1);
    expect(sut[3]!.text).toBe('$0.50 (no limit)');
    expect(sut[4]!.text).toBe('0m 30s of 10m 00s');
  });

  it('shows nothing before the run has started', () => {
    expect(runMeters(summary({ bounds: null }), [], 0)).toEqual([]);
  });
});

describe(tokensUsed.name, () => {
  it('adds input and output tokens of model turns only', () => {
    expect(tokensUsed([turn(10, 2), { ...turn(1, 1), type: 'run.checkpoint' }])).toBe(12);
  });
});

describe(formatSeconds.name, () => {
  it('writes minutes and seconds, or hours and minutes', () => {
    expect(formatSeconds(5)).toBe('0m 05s');
    expect(formatSeconds(3725)).toBe('1h 02m');
  });
});

describe(formatDuration.name, () => {
  it('writes milliseconds, seconds, or minutes and hours', () => {
    expect([formatDuration(850), formatDuration(12_500), formatDuration(185_000), formatDuration(3_725_000), formatDuration(-1)]).toEqual(['850 ms', '12.5 s', '3m 05s', '1h 02m', '—']);
  });
});
