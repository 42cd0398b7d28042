import type { RunEvent } from '../../shared/timeline';
import { buildWaterfall } from './waterfall';

let position = 0;
const event = (type: string, second: number, data: Record<string, unknown> = {}): RunEvent => ({
  id: String(++position),
  position,
  type,
  streamVersion: position,
  occurredAt: new Date(Date.UTC(2026, 10, 30, 8, 0, second)).toISOString(),
  actor: null,
  data,
});
const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);

describe(buildWaterfall.name, () => {
  it('draws queueing, model calls with their cost, the approval wait and the tool call after it', () => {
    const events = [
      event('run.admitted', 0),
      event('run.started', 2),
      event('run.model_turn', 5, { iteration: 1, durationMs: 3000, costUsd: 0.25, model: { model: 'gpt' }, toolCalls: [{ id: 'c1', name: 'slack_post' }] }),
      event('run.tool_decided', 5, { callId: 'c1', tool: 'slack_post', decision: 'approval_required' }),
      event('run.waiting', 5, { reason: 'approval', callId: 'c1', attentionId: 'a1' }),
      event('run.resumed', 65, { reason: 'approved' }),
      event('effect.prepared', 65, { callId: 'c1', tool: 'slack_post' }),
      event('run.tool_result', 67, { callId: 'c1', tool: 'slack_post', ok: true }),
      event('run.succeeded', 70),
    ];

    const sut = buildWaterfall(events, T0 + 999_000);

    expect(sut.startMs).toBe(T0);
    expect(sut.endMs).toBe(T0 + 70_000);
    expect(sut.spans.map((s) => [s.kind, s.label, (s.startMs - T0) / 1000, (s.endMs - T0) / 1000, s.costUsd, s.open])).toEqual([
      ['queue', 'Queued', 0, 2, null, false],
      ['model', 'Model turn 1 (gpt)', 2, 5, 0.25, false],
      ['wait', 'Waiting for approval of slack_post', 5, 65, null, false],
      ['tool', 'Tool call: slack_post', 65, 67, null, false],
    ]);
  });

  it('keeps the current wait of an active run open up to now', () => {
    const events = [event('run.admitted', 0), event('run.started', 1), event('run.waiting', 3, { reason: 'paused', callId: null })];

    const sut = buildWaterfall(events, T0 + 10_000);

    expect(sut.spans.at(-1)).toMatchObject({ kind: 'wait', label: 'Paused', open: true, endMs: T0 + 10_000 });
    expect(sut.endMs).toBe(T0 + 10_000);
  });

  it('draws a tool call without a result yet as running', () => {
    const events = [event('run.admitted', 0), event('run.tool_decided', 1, { callId: 'c2', tool: 'http_fetch', decision: 'allow' })];
    expect(buildWaterfall(events, T0 + 4_000).spans).toEqual([expect.objectContaining({ kind: 'tool', label: 'Tool call: http_fetch', open: true, endMs: T0 + 4_000 })]);
  });

  it('is empty without events', () => {
    expect(buildWaterfall([], 5)).toEqual({ startMs: 5, endMs: 5, spans: [] });
  });
});
