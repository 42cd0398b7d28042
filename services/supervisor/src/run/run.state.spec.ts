import { newEventId, type DecodedEvent } from '@packetagent/contracts';
import { checkpointDigest, compactMessages, evolveRun, foldRun, initialRunState, stateDigest, UnreplayableRunError, type RunAggregate } from './run.state';

const digest = 'a'.repeat(64);
const pin = { deploymentId: 'd1', workerId: 'w1', workerName: 'release-audit', version: 1, digest, effectiveDigest: digest };
const activation = { activationId: 'a1', source: 'manual', dedupeKey: 'k', triggerId: null, receivedAt: '2026-11-30T00:00:00.000Z', input: { repo: 'x' }, inputRef: null, details: {} };

function event(version: number, type: string, data: unknown): DecodedEvent {
  return { id: newEventId(), type, data, streamVersion: version } as DecodedEvent;
}

function history(): DecodedEvent[] {
  return [
    event(1, 'run.admitted', { ...pin, runId: 'r1', activation }),
    event(2, 'run.claimed', { replica: 'a', claim: 1, fromCheckpoint: null }),
    event(3, 'run.started', { model: { provider: 'scripted', model: 's', scripted: true }, bounds: { maxWallSeconds: 60, maxIterations: 5, maxToolCalls: 5, maxCostUsd: null }, deadline: '2026-11-30T00:01:00.000Z', exit: 'finish', tools: ['http_fetch'] }),
    event(4, 'run.model_turn', {
      iteration: 1, model: { provider: 'scripted', model: 's', scripted: true }, text: 'fetching',
      toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: { url: 'https://example.com/' } }, { id: 'c2', name: 'http_fetch', arguments: { url: 'https://example.org/' } }],
      stopReason: 'tool_use', usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0.25, attempts: 1, durationMs: 3, native: null,
    }),
  ];
}

function withCheckpoint(events: DecodedEvent[], phase: 'plan' | 'act' = 'plan'): DecodedEvent[] {
  const state = foldRun('r1', 'ws1', events);
  const stateHash = stateDigest(state);
  const previous = state.checkpoint?.digest ?? null;
  return [
    ...events,
    event(state.version + 1, 'run.checkpoint', {
      seq: (state.checkpoint?.seq ?? 0) + 1, phase, iteration: state.iteration, toolCalls: state.toolCalls, costUsd: state.costUsd,
      remaining: { iterations: 4, toolCalls: 5, costUsd: null, wallSeconds: 50 }, stateDigest: stateHash, previousDigest: previous, digest: checkpointDigest(previous, stateHash),
    }),
  ];
}

describe(evolveRun.name, () => {
  it('keeps the calls of the latest model turn pending until each has a result, then adds them to the transcript as one turn', () => {
    const events = history();
    let sut: RunAggregate = foldRun('r1', 'ws1', events);
    expect(sut).toMatchObject({ status: 'running', admitted: true, iteration: 1, costUsd: 0.25, claims: 1 });
    expect(sut.pending.map((call) => call.callId)).toEqual(['c1', 'c2']);

    sut = evolveRun(sut, event(5, 'run.tool_result', { callId: 'c1', tool: 'http_fetch', ok: true, output: 'one', summary: '200', executed: true }));
    expect(sut.messages.map((message) => message.role)).toEqual(['assistant']);
    sut = evolveRun(sut, event(6, 'run.tool_result', { callId: 'c2', tool: 'http_fetch', ok: false, output: 'two', summary: '404', executed: true }));
    expect(sut.pending).toEqual([]);
    expect(sut.toolCalls).toBe(2);
    expect(sut.messages[1]).toEqual({
      role: 'tool',
      results: [
        { callId: 'c1', name: 'http_fetch', content: 'one', isError: false },
        { callId: 'c2', name: 'http_fetch', content: 'two', isError: true },
      ],
    });
  });

  it('tracks an effect from prepared to completed and refuses an outcome for an effect never prepared', () => {
    let sut = foldRun('r1', 'ws1', history());
    sut = evolveRun(sut, event(5, 'effect.prepared', { effectId: 'e1', callId: 'c1', tool: 'http_fetch', verb: 'POST', resource: null, idempotencyKey: 'k', requestDigest: digest, idempotentByKey: false, attempt: 1 }));
    expect(sut.effects['e1']?.outcome).toBe('prepared');
    sut = evolveRun(sut, event(6, 'effect.completed', { effectId: 'e1', callId: 'c1', summary: 'ok' }));
    expect(sut.effects['e1']?.outcome).toBe('completed');
    expect(() => evolveRun(sut, event(7, 'effect.failed', { effectId: 'e9', callId: 'c1', error: { code: 'x', message: 'y' }, outcomeKnown: true }))).toThrow(UnreplayableRunError);
  });

  it('accepts a checkpoint that matches the replayed state and links to the one before', () => {
    const first = withCheckpoint(history());
    const second = withCheckpoint([...first, event(first.length + 1, 'run.tool_result', { callId: 'c1', tool: 'http_fetch', ok: true, output: 'one', summary: '200', executed: true })], 'act');
    const sut = foldRun('r1', 'ws1', second);
    expect(sut.checkpoint).toMatchObject({ seq: 2, version: second.length });
  });

  it('refuses a checkpoint whose state digest differs from the replay, naming the checkpoint and version', () => {
    const events = withCheckpoint(history());
    const checkpoint = events[events.length - 1]!;
    (checkpoint.data as { stateDigest: string }).stateDigest = 'b'.repeat(64);
    expect(() => foldRun('r1', 'ws1', events)).toThrow('checkpoint 1 at version 5 does not match the replayed state');
  });

  it('refuses a checkpoint that breaks the chain', () => {
    const events = withCheckpoint(history());
    (events[events.length - 1]!.data as { previousDigest: string | null }).previousDigest = 'c'.repeat(64);
    expect(() => foldRun('r1', 'ws1', events)).toThrow(/breaks the checkpoint chain/);
  });

  it('refuses a gap in versions and an event type it does not know', () => {
    const events = history();
    expect(() => foldRun('r1', 'ws1', [events[0]!, events[2]!])).toThrow(/follows version 1/);
    expect(() => foldRun('r1', 'ws1', [...events, event(5, 'run.teleported', {})])).toThrow(/run.teleported has no meaning/);
  });

  it('ends on a terminal event and counts the stop and pause requests an operator recorded', () => {
    const sut = foldRun('r1', 'ws1', [...history(), event(5, 'run.pause_requested', { reason: null }), event(6, 'run.stop_requested', { reason: 'enough' })]);
    expect(sut).toMatchObject({ pauseRequested: true, stopRequested: { reason: 'enough' } });
    expect(evolveRun(sut, event(7, 'run.cancelled', { reason: 'enough' }))).toMatchObject({ status: 'terminal', terminalType: 'run.cancelled' });
  });

  it('never changes the state it folds from', () => {
    const before = foldRun('r1', 'ws1', history());
    const snapshot = structuredClone(before);
    evolveRun(before, event(5, 'run.tool_result', { callId: 'c1', tool: 'http_fetch', ok: true, output: 'one', summary: '200', executed: true }));
    expect(before).toEqual(snapshot);
  });

  it('gives the same digest for the same history and a different one for any other', () => {
    const events = history();
    expect(stateDigest(foldRun('r1', 'ws1', events))).toBe(stateDigest(foldRun('r1', 'ws1', events)));
    const other = history();
    expect(stateDigest(foldRun('r1', 'ws1', other))).not.toBe(stateDigest(foldRun('r1', 'ws1', events)));
    expect(initialRunState('r1', 'ws1').status).toBe('new');
  });
});

describe(compactMessages.name, () => {
  it('drops the oldest messages without leaving results whose call is gone', () => {
    const messages = [
      { role: 'assistant' as const, content: 'a', toolCalls: [] },
      { role: 'assistant' as const, content: 'b', toolCalls: [{ id: 'c', name: 't', arguments: {}, rawArguments: '{}' }] },
      { role: 'tool' as const, results: [{ callId: 'c', name: 't', content: 'r', isError: false }] },
      { role: 'assistant' as const, content: 'c', toolCalls: [] },
    ];
    const shown = (list: typeof messages) => list.map((message) => (message.role === 'assistant' ? message.content : message.role));
    expect(shown(compactMessages(messages, 2) as typeof messages)).toEqual(['c']);
    expect(shown(compactMessages(messages, 1) as typeof messages)).toEqual(['b', 'tool', 'c']);
  });
});
