import type { DecodedEvent } from '@packetagent/contracts';
import { decide } from './run.decider';
import type { PinnedRun, RunIntent } from './run.intent';
import { evolveRun, initialRunState, type RunAggregate } from './run.state';

/** Recorded events that came from a decision of the run's decider: where the shadow replay compares. */
const DECISION_EVENTS = new Set(['run.started', 'run.model_turn', 'run.tool_decided', 'run.tool_result', 'run.criteria_set', 'run.compacted', 'run.waiting', 'run.resumed', 'run.budget_requested', 'run.budget_raised']);

export interface ShadowDivergence {
  streamVersion: number;
  globalPosition: number | null;
  eventType: string;
  recorded: string;
  proposed: string;
}

export interface ShadowReplay {
  decisionsCompared: number;
  divergence: ShadowDivergence | null;
  /** The state after the whole history (what the run reads now). */
  state: RunAggregate;
}

/**
 * Replays a run's recorded history through the decider under the definition it ran with and
 * under a proposed one: before each recorded decision, and once more for the decision it would
 * take next, both must decide the same. Pure: the same history and definitions always give the
 * same answer.
 */
export function shadowReplay(runId: string, workspaceId: string, events: readonly DecodedEvent[], current: PinnedRun, proposed: PinnedRun, now: Date): ShadowReplay {
  let state = initialRunState(runId, workspaceId);
  let compared = 0;
  const compare = (at: Date, event: DecodedEvent | null): ShadowDivergence | null => {
    const recorded = signature(decide(state, current, at), current);
    const next = signature(decide(state, proposed, at), proposed);
    compared += 1;
    if (recorded === next) return null;
    return {
      streamVersion: event?.streamVersion ?? state.version + 1,
      globalPosition: event?.globalPosition ?? null,
      eventType: event?.type ?? '(next decision)',
      recorded,
      proposed: next,
    };
  };
  for (const event of events) {
    if (state.started && DECISION_EVENTS.has(event.type)) {
      const divergence = compare(new Date(event.occurredAt), event);
      if (divergence) return { decisionsCompared: compared - 1, divergence, state };
    }
    state = evolveRun(state, event);
  }
  const divergence = compare(now, null);
  return { decisionsCompared: divergence ? compared - 1 : compared, divergence, state };
}

function granted(pinned: PinnedRun, tool: string, control: boolean): boolean {
  return (control && tool !== 'ask_owner') || pinned.definition.tools.some((grant) => grant.tool === tool);
}

/**
 * What a decision means for the run's course, without the wording of prompts: two definitions
 * that differ only in their instructions give the same signatures; one that no longer grants a
 * tool the run calls, changes its exit or its governors does not.
 */
export function signature(intent: RunIntent, pinned: PinnedRun): string {
  switch (intent.kind) {
    case 'done':
    case 'start':
      return intent.kind;
    case 'idle':
      return `idle(${intent.waitingOn ?? ''})`;
    case 'plan':
      return `plan(iteration ${intent.request.iteration}${intent.request.outputSchema ? ', structured output' : ''})`;
    case 'record':
    case 'park':
    case 'end':
      return `${intent.kind}(${intent.events.map(describeEvent).join(', ')})`;
    case 'act':
    case 'ask':
      return `${intent.kind}(${intent.call.callId}: ${intent.planned.tool} ${granted(pinned, intent.planned.tool, intent.planned.control) ? 'granted' : 'not granted'}${intent.kind === 'act' && intent.retry ? ', repeat' : ''})`;
    case 'abandon':
      return `abandon(${intent.effect.effectId})`;
    case 'request_budget':
      return `request_budget(${intent.ask.request})`;
    case 'await_budget':
      return `await_budget(${intent.request.attentionId})`;
    default: {
      const unreachable: never = intent;
      throw new Error(`unknown intent ${JSON.stringify(unreachable)}`);
    }
  }
}

function describeEvent(event: { type: string; data: unknown }): string {
  const data = event.data as { callId?: string; ok?: boolean; reason?: unknown; cause?: string; criteria?: string[] };
  const details = [
    data.callId,
    typeof data.ok === 'boolean' ? (data.ok ? 'ok' : 'refused') : undefined,
    typeof data.reason === 'string' && event.type !== 'run.cancelled' && event.type !== 'run.revoked' ? data.reason : undefined,
    data.cause,
    data.criteria ? data.criteria.join(' | ') : undefined,
  ].filter((part) => part !== undefined);
  return details.length ? `${event.type} ${details.join(' ')}` : event.type;
}
