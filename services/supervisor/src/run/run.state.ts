import {
  canonicalJson,
  checkpointChainDigest,
  DomainError,
  sha256Hex,
  type Activation,
  type DecodedEvent,
  type IntakeEventData,
  type JsonObject,
  type JsonValue,
  type RunExecutionEventData,
  type RunPin,
} from '@packetagent/contracts';
import type { ChatMessage, NativeTurn, ToolResultMessage } from '@packetagent/providers';

/** The run's events cannot be folded into a state we trust: it is quarantined, never guessed at. */
export class UnreplayableRunError extends DomainError {
  readonly code = 'run_unreplayable';
}

export interface PendingCall {
  callId: string;
  name: string;
  arguments: JsonObject | null;
  malformed?: string;
}

export interface EffectRecord {
  effectId: string;
  callId: string;
  tool: string;
  verb: string;
  resource: string | null;
  idempotencyKey: string;
  requestDigest: string;
  idempotentByKey: boolean;
  attempt: number;
  outcome: 'prepared' | 'completed' | 'failed';
}

export type RunStatus = 'new' | 'queued' | 'running' | 'waiting' | 'terminal';

export interface RunAggregate {
  runId: string;
  workspaceId: string;
  /** Stream version of the last event folded. */
  version: number;
  status: RunStatus;
  /** Intake admitted it to execution (a deferred run is not yet). */
  admitted: boolean;
  terminalType: string | null;
  pin: RunPin | null;
  activation: Activation | null;
  started: RunExecutionEventData<'run.started'> | null;
  claims: number;
  iteration: number;
  toolCalls: number;
  costUsd: number;
  criteria: string[];
  messages: ChatMessage[];
  /** Calls of the latest model turn that have no result yet, in the model's order. */
  pending: PendingCall[];
  /** Results of the latest model turn's calls so far. */
  results: ToolResultMessage[];
  effects: Record<string, EffectRecord>;
  /** The decision recorded last for each pending call. */
  decisions: Record<string, RunExecutionEventData<'run.tool_decided'>>;
  waiting: RunExecutionEventData<'run.waiting'> | null;
  stopRequested: { reason: string | null } | null;
  pauseRequested: boolean;
  /** Model turns in a row that made no progress (no call ran, no criteria set). */
  stalledTurns: number;
  /** Model turns in a row whose calls were all malformed. */
  malformedTurns: number;
  checkpoint: { seq: number; digest: string; version: number } | null;
  /** Chain over every folded event id and type: binds a checkpoint to the exact history. */
  historyDigest: string;
}

export function initialRunState(runId: string, workspaceId: string): RunAggregate {
  return {
    runId,
    workspaceId,
    version: 0,
    status: 'new',
    admitted: false,
    terminalType: null,
    pin: null,
    activation: null,
    started: null,
    claims: 0,
    iteration: 0,
    toolCalls: 0,
    costUsd: 0,
    criteria: [],
    messages: [],
    pending: [],
    results: [],
    effects: {},
    decisions: {},
    waiting: null,
    stopRequested: null,
    pauseRequested: false,
    stalledTurns: 0,
    malformedTurns: 0,
    checkpoint: null,
    historyDigest: sha256Hex(`run:${runId}`),
  };
}

const TERMINAL_TYPES = new Set([
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  'run.abandoned',
  'run.rejected',
  'run.expired',
  'run.revoked',
  'run.budget_exhausted',
  'run.timed_out',
]);

/** What a checkpoint stands for: the control state, without the transcript (bound through the history digest). */
export function stateDigest(state: RunAggregate): string {
  const control: JsonValue = {
    version: state.version,
    status: state.status,
    iteration: state.iteration,
    toolCalls: state.toolCalls,
    costMicroUsd: Math.round(state.costUsd * 1_000_000),
    criteria: state.criteria,
    pending: state.pending.map((call) => call.callId),
    effects: Object.values(state.effects).map((effect) => [effect.effectId, effect.outcome, effect.attempt]),
    waiting: state.waiting ? [state.waiting.reason, state.waiting.attentionId ?? ''] : null,
    historyDigest: state.historyDigest,
  };
  return sha256Hex(canonicalJson(control));
}

/** The checkpoint chain link; evidence bundles verify it with the same function. */
export const checkpointDigest = checkpointChainDigest;

function finishTurnIfAnswered(state: RunAggregate): void {
  if (state.pending.length > 0 || state.results.length === 0) return;
  state.messages.push({ role: 'tool', results: state.results });
  state.results = [];
}

/**
 * Folds one event into the run's state. Pure apart from mutating `state`; the same events
 * always give the same state, which is what recovery relies on. A checkpoint whose digests do
 * not match the fold so far, or an event out of place, makes the run unreplayable.
 */
export function evolveRun(state: RunAggregate, event: DecodedEvent): RunAggregate {
  if (event.streamVersion !== state.version + 1) {
    throw new UnreplayableRunError(`event at version ${event.streamVersion} follows version ${state.version}`);
  }
  if (event.type === 'run.checkpoint') {
    const data = event.data as RunExecutionEventData<'run.checkpoint'>;
    const expected = stateDigest(state);
    if (data.stateDigest !== expected) {
      throw new UnreplayableRunError(`checkpoint ${data.seq} at version ${event.streamVersion} does not match the replayed state`);
    }
    if (data.previousDigest !== (state.checkpoint?.digest ?? null) || data.digest !== checkpointDigest(data.previousDigest, data.stateDigest)) {
      throw new UnreplayableRunError(`checkpoint ${data.seq} at version ${event.streamVersion} breaks the checkpoint chain`);
    }
    state.checkpoint = { seq: data.seq, digest: data.digest, version: event.streamVersion };
  }
  state.version = event.streamVersion;
  state.historyDigest = sha256Hex(`${state.historyDigest}:${event.id}:${event.type}`);
  applyEvent(state, event);
  return state;
}

function applyEvent(state: RunAggregate, event: DecodedEvent): void {
  if (TERMINAL_TYPES.has(event.type)) {
    state.status = 'terminal';
    state.terminalType = event.type;
    state.waiting = null;
    return;
  }
  switch (event.type) {
    case 'run.deferred': {
      const data = event.data as IntakeEventData<'run.deferred'>;
      state.pin = pinOf(data);
      state.activation = data.activation;
      state.status = 'queued';
      return;
    }
    case 'run.admitted': {
      const data = event.data as IntakeEventData<'run.admitted'>;
      state.pin = pinOf(data);
      state.activation = data.activation;
      state.status = 'queued';
      state.admitted = true;
      return;
    }
    case 'run.started': {
      state.started = event.data as RunExecutionEventData<'run.started'>;
      state.status = 'running';
      return;
    }
    case 'run.claimed':
      state.claims = (event.data as RunExecutionEventData<'run.claimed'>).claim;
      if (state.status === 'queued') state.status = 'running';
      return;
    case 'run.stop_requested':
      state.stopRequested = { reason: (event.data as IntakeEventData<'run.stop_requested'>).reason };
      return;
    case 'run.pause_requested':
      state.pauseRequested = true;
      return;
    case 'run.resume_requested':
      state.pauseRequested = false;
      return;
    case 'run.model_turn': {
      const data = event.data as RunExecutionEventData<'run.model_turn'>;
      state.iteration = data.iteration;
      state.costUsd += data.costUsd;
      const toolCalls = data.toolCalls.map((call) => ({
        id: call.id,
        name: call.name,
        arguments: call.arguments as JsonObject | null,
        rawArguments: call.arguments ? canonicalJson(call.arguments) : '',
        ...(call.malformed ? { malformed: call.malformed } : {}),
      }));
      const native = data.native as unknown as NativeTurn | null;
      state.messages.push({ role: 'assistant', content: data.text, toolCalls, ...(native ? { native } : {}) });
      state.pending = data.toolCalls.map((call) => ({
        callId: call.id,
        name: call.name,
        arguments: call.arguments as JsonObject | null,
        ...(call.malformed ? { malformed: call.malformed } : {}),
      }));
      state.results = [];
      state.decisions = {};
      state.malformedTurns = data.toolCalls.length > 0 && data.toolCalls.every((call) => call.malformed) ? state.malformedTurns + 1 : 0;
      if (data.toolCalls.length === 0) state.stalledTurns += 1;
      return;
    }
    case 'run.tool_decided': {
      const data = event.data as RunExecutionEventData<'run.tool_decided'>;
      state.decisions[data.callId] = data;
      return;
    }
    case 'effect.prepared': {
      const data = event.data as RunExecutionEventData<'effect.prepared'>;
      state.effects[data.effectId] = { ...data, outcome: 'prepared' };
      return;
    }
    case 'effect.completed':
    case 'effect.failed': {
      const data = event.data as { effectId: string };
      const effect = state.effects[data.effectId];
      if (!effect) throw new UnreplayableRunError(`${event.type} for effect ${data.effectId}, which was never prepared`);
      effect.outcome = event.type === 'effect.completed' ? 'completed' : 'failed';
      return;
    }
    case 'run.tool_result': {
      const data = event.data as RunExecutionEventData<'run.tool_result'>;
      const index = state.pending.findIndex((call) => call.callId === data.callId);
      if (index < 0) throw new UnreplayableRunError(`a result for call ${data.callId}, which is not pending`);
      state.pending.splice(index, 1);
      state.results.push({ callId: data.callId, name: data.tool, content: typeof data.output === 'string' ? data.output : canonicalJson(data.output), isError: !data.ok });
      if (data.executed) {
        state.toolCalls += 1;
        if (data.ok) state.stalledTurns = 0;
      }
      finishTurnIfAnswered(state);
      return;
    }
    case 'run.criteria_set':
      state.criteria = (event.data as RunExecutionEventData<'run.criteria_set'>).criteria;
      state.stalledTurns = 0;
      return;
    case 'run.compacted': {
      const dropped = (event.data as RunExecutionEventData<'run.compacted'>).droppedMessages;
      state.messages = compactMessages(state.messages, dropped);
      return;
    }
    case 'run.waiting':
      state.waiting = event.data as RunExecutionEventData<'run.waiting'>;
      state.status = 'waiting';
      return;
    case 'run.resumed':
      state.waiting = null;
      state.status = 'running';
      return;
    case 'run.checkpoint':
      return;
    default:
      throw new UnreplayableRunError(`event type ${event.type} has no meaning for a run`);
  }
}

function pinOf(data: RunPin): RunPin {
  return {
    deploymentId: data.deploymentId,
    workerId: data.workerId,
    workerName: data.workerName,
    version: data.version,
    digest: data.digest,
    effectiveDigest: data.effectiveDigest,
  };
}

/**
 * Drops the oldest `count` messages of the transcript (the task itself is not part of it),
 * never leaving results whose call is gone: providers refuse them.
 */
export function compactMessages(messages: ChatMessage[], count: number): ChatMessage[] {
  let cut = Math.min(count, messages.length);
  while (cut < messages.length && messages[cut]?.role === 'tool') cut += 1;
  return messages.slice(cut);
}

/** How many messages a compaction drops to keep about the newest `keep`. */
export function messagesToDrop(messages: ChatMessage[], keep: number): number {
  return Math.max(0, messages.length - keep);
}

export function foldRun(runId: string, workspaceId: string, events: DecodedEvent[]): RunAggregate {
  const state = initialRunState(runId, workspaceId);
  for (const event of events) evolveRun(state, event);
  return state;
}
