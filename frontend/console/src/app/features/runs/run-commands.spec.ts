import type { RunEvent } from '../../shared/timeline';
import { commandCalls } from './run-commands';

const RUN = '0193a000-0000-7000-8000-000000000001';

function event(position: number, type: string, data: Record<string, unknown>): RunEvent {
  return { id: `e${position}`, position, type, streamVersion: position, occurredAt: '2026-03-01T12:00:00.000Z', actor: null, data };
}

const prepared = (position: number, callId: string, tool = 'run_command') =>
  event(position, 'effect.prepared', { effectId: `${RUN}:${callId}`, callId, tool, verb: 'exec', resource: 'npm test', idempotencyKey: `${RUN}:${callId}`, attempt: 1 });

describe(commandCalls.name, () => {
  it("finds each run_command call at its effect.prepared event, under the effect's key as exec id", () => {
    const sut = commandCalls(RUN, [event(1, 'run.model_turn', { toolCalls: [] }), prepared(2, 'c1'), prepared(3, 'c2', 'http_fetch')]);

    expect([...sut.entries()]).toEqual([[2, { callId: 'c1', execId: `${RUN}:c1`, command: 'npm test', ended: false }]]);
  });

  it('marks a call ended once it has its result, and keeps only the last preparation of a call', () => {
    const sut = commandCalls(RUN, [prepared(2, 'c1'), prepared(5, 'c1'), event(6, 'effect.completed', { callId: 'c1', summary: 'exit 0' }), prepared(7, 'c2'), event(8, 'effect.failed', { callId: 'c2', error: {} })]);

    expect([...sut.keys()]).toEqual([5, 7]);
    expect(sut.get(5)).toMatchObject({ execId: `${RUN}:c1`, ended: true });
    expect(sut.get(7)).toMatchObject({ ended: true });
  });

  it('names the exec <runId>:<callId> when the event carries no key', () => {
    const sut = commandCalls(RUN, [event(2, 'effect.prepared', { callId: 'c9', tool: 'run_command' })]);

    expect(sut.get(2)).toEqual({ callId: 'c9', execId: `${RUN}:c9`, command: null, ended: false });
  });
});
