import type { RunEvent } from '../../shared/timeline';

/** A run_command call of a run, as its timeline shows it. */
export interface CommandCall {
  callId: string;
  /** The sandbox's exec of the call: the effect's idempotency key, `<runId>:<callId>`. */
  execId: string;
  /** The command as policy saw it (normalised), when the event carries it. */
  command: string | null;
  /** The call has its answer (or failed): its output is the exec's result, no longer live. */
  ended: boolean;
}

const ENDING = new Set(['effect.completed', 'effect.failed', 'run.tool_result']);

/**
 * The run_command calls among a run's events, keyed by the position of the `effect.prepared`
 * event that started each (the last one, when a call was prepared again after a crash: the same
 * exec goes on under the same id).
 */
export function commandCalls(runId: string, events: readonly RunEvent[]): Map<number, CommandCall> {
  const prepared = new Map<string, { position: number; call: CommandCall }>();
  const ended = new Set<string>();
  for (const event of events) {
    const callId = typeof event.data['callId'] === 'string' ? event.data['callId'] : null;
    if (callId === null) continue;
    if (event.type === 'effect.prepared' && event.data['tool'] === 'run_command') {
      const key = event.data['idempotencyKey'];
      const execId = typeof key === 'string' && key ? key : `${runId}:${callId}`;
      const command = typeof event.data['resource'] === 'string' ? event.data['resource'] : null;
      prepared.set(callId, { position: event.position, call: { callId, execId, command, ended: false } });
    } else if (ENDING.has(event.type)) {
      ended.add(callId);
    }
  }
  const calls = new Map<number, CommandCall>();
  for (const [callId, { position, call }] of prepared) calls.set(position, { ...call, ended: ended.has(callId) });
  return calls;
}
