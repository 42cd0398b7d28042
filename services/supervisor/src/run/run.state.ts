import {
  canonicalJson,
  checkpointChainDigest,
  DomainError,
  RUN_TERMINAL_EVENT_TYPES,
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
  /** A person approved this call with other arguments (`run.call_edited`): `arguments` are theirs. */
  edit?: { attentionId: string; originalDigest: string; editedDigest: string };
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
  /** The run's own cost limit: `bounds.maxCostUsd`, then as each approved budget request raised it. */
  costLimitUsd: number | null;
  /** The budget request the run waits on (asked, not yet raised). */
  budgetRequest: RunExecutionEventData<'run.budget_requested'> | null;
  /** Budget requests made so far. */
  budgetRequests: number;
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
  revokeRequested: { reason: string } | null;
  pauseRequested: boolean;
  /** Version of the last operator request folded from the run's control stream (`runctl-<id>`). */
  controlVersion: number;
  /** The transcript was compacted after the latest model turn: compact at most once per turn. */
  compactedSinceTurn: boolean;
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
    costLimitUsd: null,
    budgetRequest: null,
    budgetRequests: 0,
    criteria: [],
    messages: [],
    pending: [],
    results: [],
    effects: {},
    decisions: {},
    waiting: null,
    stopRequested: null,
    revokeRequested: null,
    pauseRequested: false,
    controlVersion: 0,
    compactedSinceTurn: false,
    stalledTurns: 0,
    malformedTurns: 0,
    checkpoint: null,
    historyDigest: sha256Hex(`run:${runId}`),
  };
}

const TERMINAL_TYPES: ReadonlySet<string> = new Set(RUN_TERMINAL_EVENT_TYPES);

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
    // Only runs that asked for budget carry it, so the digests of every other run stay as they were.
    ...(state.budgetRequests > 0
      ? { budget: [state.budgetRequests, state.budgetRequest?.attentionId ?? '', Math.round((state.costLimitUsd ?? 0) * 1_000_000)] }
      : {}),
  };
  return sha256Hex(canonicalJson(control));
}

/** The checkpoint chain link; evidence bundles verify it with the same function. */
export const checkpointDigest = checkpointChainDigest;

/** Characters of one tool result the model is shown; the record keeps the whole result (large ones by reference). */
export const RESULT_OUTPUT_CHARS = 32 * 1024;

export function resultForModel(output: JsonValue): string {
  const text = typeof output === 'string' ? output : canonicalJson(output);
  return text.length <= RESULT_OUTPUT_CHARS ? text : `${text.slice(0, RESULT_OUTPUT_CHARS)}… [truncated ${text.length - RESULT_OUTPUT_CHARS} characters]`;
}

function finishTurnIfAnswered(state: RunAggregate): void {
  if (state.pending.length > 0 || state.results.length === 0) return;
  state.messages.push({ role: 'tool', results: state.results });
  state.results = [];
}

/** A copy that folding may change without touching `state`: the transcript's messages are shared, never edited. */
function copyOf(state: RunAggregate): RunAggregate {
  const effects: Record<string, EffectRecord> = {};
  for (const [id, effect] of Object.entries(state.effects)) effects[id] = { ...effect };
  return {
    ...state,
    criteria: [...state.criteria],
    messages: [...state.messages],
    pending: [...state.pending],
    results: [...state.results],
    effects,
    decisions: { ...state.decisions },
  };
}

/**
 * Folds one event into the run's state: pure, the same events always give the same state, which
 * is what recovery, shadow replay and the decider's specs rely on. A checkpoint whose digests do
 * not match the fold so far, or an event out of place, makes the run unreplayable.
 */
export function evolveRun(current: RunAggregate, event: DecodedEvent): RunAggregate {
  const state = copyOf(current);
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
      state.costLimitUsd = state.started.bounds.maxCostUsd;
      state.status = 'running';
      return;
    }
    case 'run.budget_requested':
      state.budgetRequest = event.data as RunExecutionEventData<'run.budget_requested'>;
      state.budgetRequests += 1;
      return;
    case 'run.budget_raised': {
      const data = event.data as RunExecutionEventData<'run.budget_raised'>;
      if (state.budgetRequest?.attentionId !== data.attentionId) throw new UnreplayableRunError(`a budget raise for attention ${data.attentionId}, which the run did not wait on`);
      state.costLimitUsd = data.limitUsd;
      state.budgetRequest = null;
      return;
    }
    case 'run.claimed':
      state.claims = (event.data as RunExecutionEventData<'run.claimed'>).claim;
      if (state.status === 'queued') state.status = 'running';
      return;
    case 'run.stop_requested':
      state.stopRequested = { reason: (event.data as IntakeEventData<'run.stop_requested'>).reason };
      noteControl(state, event.data);
      return;
    case 'run.pause_requested':
      state.pauseRequested = true;
      noteControl(state, event.data);
      return;
    case 'run.resume_requested':
      state.pauseRequested = false;
      noteControl(state, event.data);
      return;
    case 'run.revoke_requested':
      state.revokeRequested = { reason: (event.data as IntakeEventData<'run.revoke_requested'>).reason };
      noteControl(state, event.data);
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
      // Payload references are resolved before folding (see the run stream adapter).
      state.messages.push({ role: 'assistant', content: data.text as string, toolCalls, ...(native ? { native } : {}) });
      state.pending = data.toolCalls.map((call) => ({
        callId: call.id,
        name: call.name,
        arguments: call.arguments as JsonObject | null,
        ...(call.malformed ? { malformed: call.malformed } : {}),
      }));
      state.results = [];
      state.decisions = {};
      state.compactedSinceTurn = false;
      state.malformedTurns = data.toolCalls.length > 0 && data.toolCalls.every((call) => call.malformed) ? state.malformedTurns + 1 : 0;
      if (data.toolCalls.length === 0) state.stalledTurns += 1;
      return;
    }
    case 'run.tool_decided': {
      const data = event.data as RunExecutionEventData<'run.tool_decided'>;
      state.decisions[data.callId] = data;
      return;
    }
    case 'run.call_edited': {
      const data = event.data as RunExecutionEventData<'run.call_edited'>;
      const index = state.pending.findIndex((call) => call.callId === data.callId);
      if (index < 0) throw new UnreplayableRunError(`an edit of call ${data.callId}, which is not pending`);
      const { attentionId, originalDigest, editedDigest } = data;
      state.pending[index] = { ...state.pending[index]!, arguments: data.arguments as JsonObject, edit: { attentionId, originalDigest, editedDigest } };
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
      state.results.push({ callId: data.callId, name: data.tool, content: resultForModel(data.output as JsonValue), isError: !data.ok });
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
      state.compactedSinceTurn = true;
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
    case 'run.migrated': {
      const { to } = event.data as RunExecutionEventData<'run.migrated'>;
      if (!state.pin) throw new UnreplayableRunError('a migration of a run that was never admitted');
      state.pin = { ...state.pin, version: to.version, digest: to.digest, effectiveDigest: to.effectiveDigest };
      return;
    }
    default:
      throw new UnreplayableRunError(`event type ${event.type} has no meaning for a run`);
  }
}

/** Operator requests folded from the run's control stream carry their position there. */
function noteControl(state: RunAggregate, data: unknown): void {
  const position = (data as { controlVersion?: number }).controlVersion;
  if (typeof position === 'number' && position > state.controlVersion) state.controlVersion = position;
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
  return events.reduce(evolveRun, initialRunState(runId, workspaceId));
}
