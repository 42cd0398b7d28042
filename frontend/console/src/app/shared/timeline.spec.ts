import { isTerminal, RUN_STATES } from './run-vocabulary';
import { describeEvent, mergeEvents, toRunEvent, totalCost, type RunEvent } from './timeline';

const event = (position: number, type: string, data: Record<string, unknown> = {}): RunEvent => ({
  id: `e${position}`,
  position,
  type,
  streamVersion: position,
  occurredAt: '2026-01-01T00:00:00Z',
  actor: null,
  data,
});

describe(mergeEvents.name, () => {
  it('keeps each position once and orders by position when a replay overlaps', () => {
    const sut = mergeEvents([event(1, 'run.started'), event(3, 'run.checkpoint')], [event(3, 'run.checkpoint'), event(2, 'run.model_turn'), event(4, 'run.succeeded')]);
    expect(sut.map((e) => e.position)).toEqual([1, 2, 3, 4]);
  });
});

describe(toRunEvent.name, () => {
  it('reads the page item shape and the envelope shape alike', () => {
    expect(toRunEvent({ id: 'a', position: 5, type: 'run.started', streamVersion: 2, occurredAt: 't', actor: null, data: {} })).toMatchObject({ position: 5, streamVersion: 2 });
    expect(toRunEvent({ globalPosition: '6', type: 'run.started', version: 3, data: { x: 1 } })).toMatchObject({ position: 6, streamVersion: 3, data: { x: 1 } });
    expect(toRunEvent({ type: 'run.started' }, 9)).toMatchObject({ position: 9 });
    expect(toRunEvent({ nothing: true })).toBeNull();
  });
});

describe(describeEvent.name, () => {
  it('shows a model turn with its provider, calls and cost', () => {
    const sut = describeEvent(event(1, 'run.model_turn', { iteration: 1, model: { provider: 'scripted', model: 'health-report', scripted: true }, text: 'Fetching.', toolCalls: [{ name: 'http_fetch' }], usage: { inputTokens: 420, outputTokens: 38 }, costUsd: 0.00183 }));
    expect(sut).toMatchObject({ kind: 'model', title: 'Model turn 1 (scripted/health-report, scripted)', costUsd: 0.00183 });
    expect(sut.detail).toContain('calls: http_fetch');
  });

  it('tones policy decisions by their answer', () => {
    expect(describeEvent(event(2, 'run.tool_decided', { tool: 'slack_post', verb: '', decision: 'approval_required', reason: { code: 'x', text: 'needs approval' } }))).toMatchObject({ kind: 'decision', tone: 'warn', title: 'Policy: approval required slack_post' });
    expect(describeEvent(event(3, 'run.tool_decided', { tool: 'http_fetch', verb: 'GET', decision: 'deny', reason: { code: 'x', text: 'no' } })).tone).toBe('bad');
  });

  it('marks outcomes, checkpoints and effects', () => {
    expect(describeEvent(event(4, 'run.succeeded', { summary: 'done' }))).toMatchObject({ kind: 'outcome', tone: 'ok', title: 'Succeeded', detail: 'done' });
    expect(describeEvent(event(5, 'run.budget_exhausted', { detail: 'over' }))).toMatchObject({ kind: 'outcome', tone: 'bad', title: 'Budget exhausted' });
    expect(describeEvent(event(6, 'run.checkpoint', { seq: 2, phase: 'act', iteration: 1, toolCalls: 1, costUsd: 0.1, digest: 'abcdef0123456789' })).title).toBe('Checkpoint 2 (act)');
    expect(describeEvent(event(7, 'effect.failed', { error: { code: 'timeout', message: 'slow' } }))).toMatchObject({ kind: 'effect', tone: 'bad', title: 'Effect failed (timeout)' });
  });

  it('says an effect whose outcome is not known is not known, rather than failed', () => {
    expect(describeEvent(event(7, 'effect.failed', { error: { code: 'transport_lost', message: 'the link broke' }, outcomeKnown: false }))).toMatchObject({
      kind: 'effect',
      tone: 'warn',
      title: 'Effect outcome unknown (transport_lost)',
      detail: 'the link broke',
    });
  });

  it('names why a run was abandoned, never as a success', () => {
    expect(describeEvent(event(8, 'run.abandoned', { cause: 'transport_lost', detail: 'run_command exec: the link broke' }))).toMatchObject({
      kind: 'outcome',
      tone: 'bad',
      title: 'Abandoned (the link to a computer broke while a command ran there)',
      detail: 'run_command exec: the link broke',
    });
    expect(describeEvent(event(8, 'run.abandoned', { cause: 'uncertain_effect', detail: 'x' })).title).toBe("Abandoned (an effect's outcome is not known)");
    expect(describeEvent(event(8, 'run.abandoned', { cause: 'some_new_cause', detail: 'x' })).title).toBe('Abandoned (some new cause)');
  });

  it('reads the event of every terminal state as an outcome, good only for run.succeeded', () => {
    const sut = RUN_STATES.filter(isTerminal).map((state) => describeEvent(event(8, `run.${state}`)));

    expect(sut.map((entry) => [entry.type, entry.kind, entry.tone])).toEqual(
      RUN_STATES.filter(isTerminal).map((state) => [`run.${state}`, 'outcome', state === 'succeeded' ? 'ok' : 'bad']),
    );
    expect(sut).toHaveLength(9);
  });

  it('reads an operator request as a state change, not as an outcome', () => {
    expect(describeEvent(event(9, 'run.stop_requested', { reason: null }))).toMatchObject({ kind: 'state', tone: 'neutral', title: 'Stop requested' });
  });

  it('names who asked for a folded operator request, and the actor of one intake recorded', () => {
    expect(describeEvent(event(10, 'run.revoke_requested', { reason: 'key leaked', controlVersion: 2, requestedBy: { kind: 'user', id: 'u1' } }))).toMatchObject({
      kind: 'state',
      title: 'Revoke requested',
      detail: 'key leaked; by user u1',
    });
    expect(describeEvent({ ...event(11, 'run.pause_requested', { reason: null }), actor: { kind: 'api_key', id: 'k1' } }).detail).toBe('by api_key k1');
    expect(describeEvent(event(12, 'run.resume_requested', {})).detail).toBe('');
  });

  it('shows a migration as the versions it moved between, the decisions compared and who moved it', () => {
    const sut = describeEvent(
      event(13, 'run.migrated', {
        from: { version: 2, digest: 'a'.repeat(64), effectiveDigest: 'a'.repeat(64) },
        to: { version: 3, digest: 'b'.repeat(64), effectiveDigest: 'b'.repeat(64) },
        decisionsCompared: 5,
        by: { kind: 'user', id: 'u1' },
      }),
    );
    expect(sut).toMatchObject({ kind: 'state', tone: 'neutral', title: 'Migrated from version 2 to 3', detail: '5 decisions compared, all the same; by user u1' });
  });
});

describe(totalCost.name, () => {
  it('adds the cost of model turns only', () => {
    expect(totalCost([event(1, 'run.model_turn', { costUsd: 0.5 }), event(2, 'run.checkpoint', { costUsd: 0.5 }), event(3, 'run.model_turn', { costUsd: 0.25 })])).toBe(0.75);
  });
});
