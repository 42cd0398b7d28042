import type { Row } from '../table';
import { decoded, runHistory } from '../testing/run-history';
import { evolveRun, runsProjection } from './runs.projection';

function given(types: number): Row | null {
  return runHistory('run1')
    .slice(0, types)
    .reduce<Row | null>((row, event, index) => evolveRun(row, decoded(event.type, event.data, { stream: 'run-run1', position: index + 1 })), null);
}

function when(row: Row | null, type: string, data: unknown, position = 100): Row | null {
  return evolveRun(row, decoded(type, data, { stream: 'run-run1', position }));
}

describe(evolveRun.name, () => {
  it('creates a queued run without a phase when the run is admitted', () => {
    const sut = given(1);
    expect(sut).toMatchObject({ run_id: 'run1', workspace_id: 'ws1', deployment_id: 'dep1', worker_name: 'reporter', version: 2, state: 'queued', phase: null, iteration: 0, source: 'manual' });
  });

  it('records model, bounds and full remaining allowances when the run starts', () => {
    const sut = given(3);
    expect(sut).toMatchObject({
      state: 'running',
      phase: 'plan',
      model: { provider: 'scripted', scripted: true },
      bounds: { maxIterations: 10 },
      remaining: { iterations: 10, toolCalls: 5, costUsd: 2, wallSeconds: 600 },
    });
    expect(sut!['started_at']).toBe(sut!['updated_at']);
  });

  it('counts iterations and cost from model turns and moves to act when the turn calls a tool', () => {
    expect(given(4)).toMatchObject({ iteration: 1, cost_usd: 0.25, phase: 'act' });
  });

  it('shows the attention a waiting run waits on, and clears it on resume', () => {
    expect(given(6)).toMatchObject({ state: 'waiting', phase: 'waiting', waiting_reason: 'approval', waiting_attention_id: 'att1' });
    expect(given(7)).toMatchObject({ state: 'running', phase: 'act', waiting_reason: null, waiting_attention_id: null });
  });

  it('takes counts, remaining allowances and the chain link from a checkpoint', () => {
    expect(given(9)).toMatchObject({ tool_calls: 1, remaining: { iterations: 9, costUsd: 1.75 }, last_checkpoint_seq: 1, last_checkpoint_digest: 'b'.repeat(64) });
  });

  it('ends the run with the outcome of its terminal event', () => {
    const sut = given(10);
    expect(sut).toMatchObject({ state: 'succeeded', phase: 'ended', outcome_type: 'run.succeeded', outcome_detail: 'all done' });
    expect(sut!['ended_at']).toBe(sut!['updated_at']);
  });

  it('keeps a failure reason and a bounded detail', () => {
    const sut = when(given(4), 'run.failed', { reason: 'iteration_limit', detail: 'x'.repeat(2_000) });
    expect(sut).toMatchObject({ state: 'failed', phase: 'ended', outcome_type: 'run.failed', outcome_reason: 'iteration_limit' });
    expect((sut!['outcome_detail'] as string).length).toBe(500);
  });

  it('leaves an ended run as it ended when a late control request arrives', () => {
    const ended = given(10);
    expect(when(ended, 'run.stop_requested', { reason: 'late' })).toBe(ended);
  });

  it('moves a waiting run to the version it migrated to, and leaves its state and wait as they were', () => {
    const waiting = given(6);
    const to = { version: 3, digest: 'c'.repeat(64), effectiveDigest: 'd'.repeat(64) };
    const sut = when(waiting, 'run.migrated', { from: { version: 2, digest: 'a'.repeat(64), effectiveDigest: 'a'.repeat(64) }, to, decisionsCompared: 4, by: { kind: 'user', id: 'u1' } });
    expect(sut).toMatchObject({ version: 3, state: 'waiting', phase: 'waiting', waiting_reason: 'approval', waiting_attention_id: 'att1' });
  });

  it('takes an event type it has no case for without failing or changing the run', () => {
    const waiting = given(6);
    expect(when(waiting, 'run.resume_requested', { controlVersion: 2, requestedBy: { kind: 'user', id: 'u1' } })).toMatchObject({ ...waiting, updated_at: expect.any(String) });
  });

  it('changes nothing for an event of a run it never saw created', () => {
    expect(when(null, 'run.started', runHistory('run1')[2]!.data)).toBeNull();
  });

  it('marks a deferred run with its hold and clears the hold when it is admitted', () => {
    const deferred = evolveRun(null, decoded('run.deferred', { ...(runHistory('run1')[0]!.data as object), reason: 'concurrency_limit' }, { stream: 'run-run1', position: 1 }));
    expect(deferred).toMatchObject({ state: 'queued', hold_reason: 'concurrency_limit' });
    expect(when(deferred, 'run.admitted', runHistory('run1')[0]!.data, 2)).toMatchObject({ state: 'queued', hold_reason: null });
  });
});

describe('runsProjection', () => {
  it('ignores events of other streams', () => {
    expect(runsProjection.changes(decoded('worker.created', { workerId: 'w', name: 'n', description: '' }, { stream: 'worker-w', position: 1 }))).toEqual([]);
  });
});
