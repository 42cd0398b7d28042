import {
  canonicalJson,
  redactResource,
  sha256Hex,
  type AttentionState,
  type AuthorizeResult,
  type JsonValue,
} from '@packetagent/contracts';
import type { ModelTurn } from '@packetagent/providers';
import { ToolArgumentsError, type PlannedCall, type ToolOutcome } from '@packetagent/tools';
import { AskOwnerArgs, declaredCriteria, FinishArgs, finishProblems, outputFromText, ProposeCriteriaArgs, UpdateCriteriaArgs } from './run.control-tools';
import type { DecisionOutcome, ExecutionOutcome, Phase, PinnedRun, PlanRequest, RunEmit, RunIntent } from './run.intent';
import { estimateTokens, requestMessages, systemPrompt } from './run.prompt';
import { messagesToDrop, type EffectRecord, type PendingCall, type RunAggregate } from './run.state';
import { budgetAsk, requestsBudget } from './run.budget-requests';

export { afterBudgetAnswer, afterBudgetRaised, afterBudgetRefusal, budgetRefused, budgetRequested, type LedgerRefusal } from './run.budget-requests';

/**
 * The run's next move, from its folded state alone: pure, so the same history always decides
 * the same, a recovered run continues where it stopped, and a waiting run can be replayed in
 * shadow under another version. Order matters: a recorded stop or revoke wins over everything,
 * then the wall-time bound, then pause, then cost, then the work itself.
 */
export function decide(state: RunAggregate, pinned: PinnedRun, now: Date): RunIntent {
  if (state.status === 'terminal') return { kind: 'done' };
  if (!state.pin || !state.activation || state.status === 'new' || (state.status === 'queued' && !state.admitted)) return { kind: 'idle', waitingOn: null };
  if (state.stopRequested) return end({ type: 'run.cancelled', data: { reason: state.stopRequested.reason ?? 'stopped by an operator' } });
  if (state.revokeRequested) return end({ type: 'run.revoked', data: { reason: state.revokeRequested.reason } });
  if (!state.started) return start(pinned, now);
  if (now.getTime() >= Date.parse(state.started.deadline)) return end({ type: 'run.timed_out', data: { deadline: state.started.deadline } });
  if (state.waiting?.reason === 'paused') {
    return state.pauseRequested ? { kind: 'idle', waitingOn: null } : { kind: 'record', events: [{ type: 'run.resumed', data: { reason: 'resume_requested' } }] };
  }
  if (state.pauseRequested) return { kind: 'park', events: [{ type: 'run.waiting', data: { reason: 'paused', attentionId: null, callId: null } }], waitingOn: null };
  if (state.budgetRequest) return { kind: 'await_budget', request: state.budgetRequest };
  const limit = state.costLimitUsd;
  if (state.costUsd > 0 && limit !== null && state.costUsd >= limit) {
    const detail = `the run has spent $${state.costUsd.toFixed(6)} of its $${limit} limit`;
    if (requestsBudget(pinned)) return { kind: 'request_budget', ask: budgetAsk(state, pinned, { spentUsd: state.costUsd, limitUsd: limit, shortfallUsd: 0, reason: detail }) };
    return end({ type: 'run.budget_exhausted', data: { detail, scope: null } });
  }
  const next = state.pending[0];
  return next ? decideCall(state, pinned, next) : decidePlan(state, pinned);
}

function end(...events: RunEmit[]): RunIntent {
  return { kind: 'end', events };
}

function start(pinned: PinnedRun, now: Date): RunIntent {
  const { definition, model } = pinned;
  const deadline = new Date(now.getTime() + definition.bounds.maxWallSeconds * 1000).toISOString();
  return {
    kind: 'start',
    deadline,
    events: [
      {
        type: 'run.started',
        data: {
          model: { provider: model.provider, model: model.model, scripted: model.scripted },
          bounds: {
            maxWallSeconds: definition.bounds.maxWallSeconds,
            maxIterations: definition.bounds.maxIterations,
            maxToolCalls: definition.bounds.maxToolCalls,
            maxCostUsd: definition.budgets.perRunUsd ?? null,
          },
          deadline,
          exit: 'finish' in definition.exit ? 'finish' : 'output_schema',
          tools: definition.tools.map((grant) => grant.tool),
        },
      },
      ...declaredCriteria(definition),
    ],
  };
}

/** The model's request for this turn, compacting once per turn near the window and ending when even that is too much. */
function decidePlan(state: RunAggregate, pinned: PinnedRun): RunIntent {
  const bounds = state.started!.bounds;
  if (state.iteration >= bounds.maxIterations) {
    return end({ type: 'run.failed', data: { reason: 'iteration_limit', detail: `the run used all ${bounds.maxIterations} iterations` } });
  }
  const { definition, model } = pinned;
  const system = systemPrompt(definition, state.criteria);
  const messages = requestMessages(pinned.task, state);
  const wanted = 'maxOutputTokens' in definition.model && definition.model.maxOutputTokens ? definition.model.maxOutputTokens : 4_096;
  const maxOutputTokens = Math.min(wanted, model.maxOutputTokens);
  const tokens = estimateTokens(system, messages) + maxOutputTokens;
  if (tokens > model.contextWindow * pinned.compactAtRatio && !state.compactedSinceTurn) {
    const drop = messagesToDrop(state.messages, Math.max(2, Math.floor(state.messages.length / 2)));
    if (drop > 0) return { kind: 'record', events: [{ type: 'run.compacted', data: { droppedMessages: drop, estimatedTokens: tokens } }] };
  }
  if (tokens > model.contextWindow * pinned.compactAtRatio && tokens > model.contextWindow) {
    return end({ type: 'run.failed', data: { reason: 'context_exhausted', detail: `about ${tokens} tokens needed, the model's window is ${model.contextWindow}` } });
  }
  const outputSchema = 'outputSchema' in definition.exit ? definition.exit.outputSchema : undefined;
  const request: PlanRequest = {
    iteration: state.iteration + 1,
    system,
    messages,
    tools: definition.tools.map((grant) => grant.tool),
    maxOutputTokens,
    ...(outputSchema && model.structuredOutput ? { outputSchema } : {}),
  };
  return { kind: 'plan', request };
}

/** The next pending call: corrected, handled as a control tool, recovered, refused by a bound, or acted on. */
function decideCall(state: RunAggregate, pinned: PinnedRun, call: PendingCall): RunIntent {
  if (call.malformed || !call.arguments) {
    if (state.malformedTurns >= 2) {
      return end({ type: 'run.failed', data: { reason: 'model_error', detail: 'the model sent malformed tool arguments again after a correction' } });
    }
    const output = `Your arguments for ${call.name} were not a JSON object (${call.malformed ?? 'missing'}). Nothing was executed; call the tool again with valid arguments.`;
    return answer(state, call, { ok: false, output, summary: 'malformed arguments: correction sent' }, false);
  }
  let planned: PlannedCall;
  try {
    planned = pinned.plan(call.callId, call.name, call.arguments);
  } catch (error) {
    if (!(error instanceof ToolArgumentsError)) throw error;
    return answer(state, call, { ok: false, output: `${error.message}. Nothing was executed; call the tool again with valid arguments.`, summary: 'invalid arguments: correction sent' }, false);
  }
  if (planned.control) return decideControl(state, pinned, call, planned);
  if (call.edit && planned.callDigest !== call.edit.editedDigest) {
    // Planned here, the edit is not the call the person approved: it does not run under that approval.
    const output = `The call was approved with edited arguments, but they plan to another call than the one approved. Nothing was executed.`;
    return answer(state, call, { ok: false, output, summary: 'edited call does not match its approval' }, false);
  }
  const uncertain = Object.values(state.effects).find((effect) => effect.callId === call.callId && effect.outcome === 'prepared');
  if (uncertain) {
    return uncertain.idempotentByKey ? { kind: 'act', call, planned, retry: uncertain } : { kind: 'abandon', call, planned, effect: uncertain };
  }
  const { maxToolCalls } = state.started!.bounds;
  if (state.toolCalls >= maxToolCalls) {
    return end({ type: 'run.failed', data: { reason: 'tool_call_limit', detail: `the run used all ${maxToolCalls} tool calls` } });
  }
  return { kind: 'act', call, planned, retry: null };
}

function decideControl(state: RunAggregate, pinned: PinnedRun, call: PendingCall, planned: PlannedCall): RunIntent {
  const args = call.arguments ?? {};
  switch (planned.tool) {
    case 'finish': {
      const parsed = FinishArgs.parse(args);
      const problems = finishProblems(pinned.definition, state.criteria, parsed);
      if (problems.length > 0) {
        return answer(state, call, { ok: false, output: `Not finished: ${problems.join('; ')}. Keep working, then call finish again.`, summary: 'finish refused' }, false);
      }
      return end(
        { type: 'run.tool_result', data: { callId: call.callId, tool: 'finish', ok: true, output: 'finished', summary: 'finished', executed: false } },
        { type: 'run.succeeded', data: { summary: parsed.summary.slice(0, 4_000), output: (parsed.output ?? null) as JsonValue } },
      );
    }
    case 'propose_criteria': {
      const { criteria } = ProposeCriteriaArgs.parse(args);
      if (state.criteria.length > 0) {
        return answer(state, call, { ok: false, output: 'Done-criteria are already set; use update_criteria with a reason to change them.', summary: 'criteria already set' }, false);
      }
      return answer(state, call, { ok: true, output: { criteria }, summary: `${criteria.length} criteria proposed` }, false, [
        { type: 'run.criteria_set', data: { criteria, reason: null, callId: call.callId } },
      ]);
    }
    case 'update_criteria': {
      const { criteria, reason } = UpdateCriteriaArgs.parse(args);
      return answer(state, call, { ok: true, output: { criteria }, summary: `criteria updated: ${reason.slice(0, 200)}` }, false, [
        { type: 'run.criteria_set', data: { criteria, reason, callId: call.callId } },
      ]);
    }
    case 'ask_owner':
      AskOwnerArgs.parse(args);
      return { kind: 'ask', call, planned };
    default:
      return answer(state, call, { ok: false, output: `${planned.tool} is not a control tool`, summary: 'unknown control tool' }, false);
  }
}

// ----------------------------------------------------------------------------------------------
// Follow-ups: a port's answer turned into events, purely.

/** The model answered: its turn, and the end of the run when the answer finishes or stalls it. */
export function afterModelTurn(state: RunAggregate, pinned: PinnedRun, request: PlanRequest, turn: ModelTurn): { kind: 'record'; events: RunEmit[]; checkpoint?: Phase } | { kind: 'end'; events: RunEmit[] } {
  const events: RunEmit[] = [
    {
      type: 'run.model_turn',
      data: {
        iteration: request.iteration,
        model: { provider: turn.provider, model: turn.model, scripted: turn.scripted },
        text: turn.text,
        toolCalls: turn.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, ...(call.malformed ? { malformed: call.malformed.slice(0, 1_000) } : {}) })),
        stopReason: turn.stopReason,
        usage: turn.usage,
        costUsd: turn.costUsd,
        attempts: turn.attempts,
        durationMs: Math.round(turn.durationMs),
        native: turn.native as unknown as JsonValue,
      },
    },
  ];
  if (turn.toolCalls.length === 0) {
    const schema = 'outputSchema' in pinned.definition.exit ? pinned.definition.exit.outputSchema : undefined;
    const finished = schema ? outputFromText(turn.text, schema) : null;
    if (finished) return { kind: 'end', events: [...events, { type: 'run.succeeded', data: { summary: 'the final answer matches the output schema', output: finished } }] };
    if (state.stalledTurns + 1 >= pinned.stallTurns) {
      return { kind: 'end', events: [...events, { type: 'run.failed', data: { reason: 'stalled', detail: `${pinned.stallTurns} model turns in a row made no progress` } }] };
    }
  }
  return { kind: 'record', events, checkpoint: 'plan' };
}

export function modelFailed(detail: string): RunEmit[] {
  return [{ type: 'run.failed', data: { reason: 'model_error', detail: detail.slice(0, 2_000) } }];
}

/** Policy's answer for a tool call (`retry`: repeating a prepared effect by its key). */
export function afterDecision(state: RunAggregate, call: PendingCall, planned: PlannedCall, decision: AuthorizeResult, retry: EffectRecord | null): DecisionOutcome {
  const decided = decisionEvent(planned, decision);
  const resumed = resumedEvents(state, decision);
  // Approved with edited arguments: the edit becomes the pending call, which is then asked about again by its own digest.
  if (decision.edit && !call.edit && decision.edit.originalDigest === planned.callDigest) return { kind: 'record', events: [decided, callEdited(call, decision.edit)] };
  if (decision.decision === 'approval_required') return awaitAnswer(state, call, decision, decided, 'approval');
  if (decision.decision === 'deny') return denied(state, call, planned, decision, decided, resumed);
  if (!planned.mutating) return { kind: 'execute', events: [...resumed, decided], effect: null, reserveAction: false };
  const effect: EffectRecord = retry
    ? { ...retry, attempt: retry.attempt + 1, outcome: 'prepared' }
    : {
        effectId: `${state.runId}:${call.callId}`,
        callId: call.callId,
        tool: planned.tool,
        verb: planned.verb,
        resource: planned.resource === null ? null : redactResource(planned.resource),
        idempotencyKey: `${state.runId}:${call.callId}`,
        requestDigest: sha256Hex(canonicalJson({ tool: planned.tool, verb: planned.verb, resource: planned.resource, args: planned.redactedArgs })),
        idempotentByKey: planned.idempotentByKey,
        attempt: 1,
        outcome: 'prepared',
      };
  return { kind: 'execute', events: [...resumed, decided], effect, reserveAction: retry === null };
}

/** Policy's answer for ask_owner: approval is "yes", rejection or expiry is a "no" the model reads. */
export function afterQuestion(state: RunAggregate, call: PendingCall, planned: PlannedCall, decision: AuthorizeResult): DecisionOutcome {
  const decided = decisionEvent(planned, decision);
  const resumed = resumedEvents(state, decision);
  if (decision.decision === 'approval_required') return awaitAnswer(state, call, decision, decided, 'question');
  if (decision.decision === 'deny') return denied(state, call, planned, decision, decided, resumed);
  return answerOutcome(state, call, { ok: true, output: { answered: true, approved: true, reason: decision.reason.text }, summary: 'the owner approved' }, false, [...resumed, decided]);
}

/**
 * A credential the allowed call needs waits for an operator (its OAuth connection must be made
 * again). Nothing was prepared or reserved yet. The run parks on the attention raised for it, and
 * stays parked on a wake that finds the same one open; once that attention is answered without a
 * connection that works (declined, expired, approved yet still refused), the run ends saying so.
 */
export function afterCredentialRefused(
  state: RunAggregate,
  call: PendingCall,
  before: RunEmit[],
  refusal: { credential: string; reason: string },
  attention: { attentionId: string; state: AttentionState },
): Extract<DecisionOutcome, { kind: 'idle' | 'park' | 'end' }> {
  if (attention.state === 'open') {
    if (state.waiting?.reason === 'reconnect' && state.waiting.attentionId === attention.attentionId) return { kind: 'idle', waitingOn: attention.attentionId };
    return { kind: 'park', events: [...before, { type: 'run.waiting', data: { reason: 'reconnect', attentionId: attention.attentionId, callId: call.callId } }], waitingOn: attention.attentionId };
  }
  const detail = `the credential ${refusal.credential} could not be used: ${refusal.reason} (the attention asking to connect it again was ${attention.state})`;
  return { kind: 'end', events: [...before, { type: 'run.failed', data: { reason: 'credential_unavailable', detail: detail.slice(0, 2_000) } }] };
}

export function preparedEvent(effect: EffectRecord): RunEmit {
  const { outcome: _outcome, ...data } = effect;
  return { type: 'effect.prepared', data };
}

/**
 * Attempts of an effect idempotent by key whose outcome was lost with the link to its computer;
 * after the last, the model is told the outcome is not known, as after an interruption.
 */
export const LOST_EFFECT_ATTEMPTS = 3;

/** The tool ran (and its receipt, for an effect); a lost outcome is repeated by key, or ends the run. */
export function afterExecution(state: RunAggregate, call: PendingCall, planned: PlannedCall, outcome: ToolOutcome, effect: EffectRecord | null): ExecutionOutcome {
  const result = resultEvent(call, planned.tool, outcome, true);
  if (!effect) return { kind: 'record', events: [result], checkpoint: phaseEnd(state, call) };
  if (outcome.lost) {
    // Never a success, and not a failure the far side reported: whether it acted is not known.
    const failed: RunEmit = { type: 'effect.failed', data: { effectId: effect.effectId, callId: call.callId, error: { code: outcome.lost.cause, message: outcome.lost.detail.slice(0, 1_000) }, outcomeKnown: false } };
    if (!effect.idempotentByKey) return { kind: 'abandon', events: [failed, result], effect, detail: outcome.lost.detail };
    // The effect stays prepared, so the next decision repeats it by its key (the receipts rules).
    if (effect.attempt < LOST_EFFECT_ATTEMPTS) return { kind: 'retry' };
    return { kind: 'record', events: [failed, result], checkpoint: phaseEnd(state, call) };
  }
  const receipt: RunEmit = outcome.ok
    ? { type: 'effect.completed', data: { effectId: effect.effectId, callId: call.callId, summary: outcome.summary.slice(0, 1_000) } }
    : { type: 'effect.failed', data: { effectId: effect.effectId, callId: call.callId, error: outcome.error ?? { code: 'failed', message: outcome.summary }, outcomeKnown: true } };
  return { kind: 'record', events: [receipt, result], checkpoint: phaseEnd(state, call) };
}

/** Cut off mid-call: whether the far side acted is not known, and the record says so. */
export function afterInterruption(call: PendingCall, planned: PlannedCall, effect: EffectRecord): { events: RunEmit[]; checkpoint: Phase } {
  return {
    events: [
      { type: 'effect.failed', data: { effectId: effect.effectId, callId: call.callId, error: { code: 'interrupted', message: 'the call was interrupted' }, outcomeKnown: false } },
      { type: 'run.tool_result', data: { callId: call.callId, tool: planned.tool, ok: false, output: 'The call was interrupted; its outcome is not known.', summary: 'interrupted', executed: true } },
    ],
    checkpoint: 'act',
  };
}

export function abandonUncertain(effect: EffectRecord, attentionId: string | null): RunEmit[] {
  return [
    {
      type: 'run.abandoned',
      data: {
        cause: 'uncertain_effect',
        detail: `${effect.tool} ${effect.verb} was prepared and its outcome never recorded; it is not idempotent by key, so it is not repeated`,
        effect: receiptOf(effect),
        attentionId,
      },
    },
  ];
}

/** The link to the computer a call ran on broke while it ran, and the call may not be repeated. */
export function abandonLost(effect: EffectRecord, detail: string, attentionId: string | null): RunEmit[] {
  return [
    {
      type: 'run.abandoned',
      data: {
        cause: 'transport_lost',
        detail: `${effect.tool} ${effect.verb}: ${detail}; it is not idempotent by key, so it is not repeated`.slice(0, 2_000),
        effect: receiptOf(effect),
        attentionId,
      },
    },
  ];
}

function receiptOf(effect: EffectRecord) {
  return {
    effectId: effect.effectId,
    callId: effect.callId,
    tool: effect.tool,
    verb: effect.verb,
    resource: effect.resource,
    idempotencyKey: effect.idempotencyKey,
    requestDigest: effect.requestDigest,
  };
}

// ----------------------------------------------------------------------------------------------

function decisionEvent(planned: PlannedCall, decision: AuthorizeResult): RunEmit {
  return {
    type: 'run.tool_decided',
    data: {
      callId: planned.callId,
      tool: planned.tool,
      verb: planned.verb,
      resource: planned.resource === null ? null : redactResource(planned.resource),
      callDigest: planned.callDigest,
      decision: decision.decision,
      reason: decision.reason,
      attentionId: decision.approvalId ?? null,
    },
  };
}

function callEdited(call: PendingCall, edit: NonNullable<AuthorizeResult['edit']>): RunEmit {
  return {
    type: 'run.call_edited',
    data: { callId: call.callId, attentionId: edit.attentionId, originalDigest: edit.originalDigest, editedDigest: edit.editedDigest, arguments: edit.arguments, editor: edit.editor },
  };
}

function resumedEvents(state: RunAggregate, decision: AuthorizeResult): RunEmit[] {
  return state.waiting ? [{ type: 'run.resumed', data: { reason: decision.reason.code } }] : [];
}

/** Parks the run until the person answers; a run already parked on the same request stays as it is and records nothing. */
function awaitAnswer(state: RunAggregate, call: PendingCall, decision: AuthorizeResult, decided: RunEmit, reason: 'approval' | 'question'): DecisionOutcome {
  const attentionId = decision.approvalId ?? null;
  if (state.waiting && state.waiting.attentionId === attentionId) return { kind: 'idle', waitingOn: attentionId };
  return { kind: 'park', events: [decided, { type: 'run.waiting', data: { reason, attentionId, callId: call.callId } }], waitingOn: attentionId };
}

function denied(state: RunAggregate, call: PendingCall, planned: PlannedCall, decision: AuthorizeResult, decided: RunEmit, resumed: RunEmit[]): DecisionOutcome {
  const code = decision.reason.code;
  const attentionId = state.waiting?.attentionId ?? decision.approvalId ?? 'unknown';
  const question = planned.tool === 'ask_owner';
  if (code === 'deployment_revoked' || code === 'approval_withdrawn') return { kind: 'end', events: [...resumed, decided, { type: 'run.revoked', data: { reason: decision.reason.text } }] };
  if (code === 'approval_rejected' && !question) return { kind: 'end', events: [...resumed, decided, { type: 'run.rejected', data: { attentionId, reason: decision.reason.text } }] };
  if (code === 'approval_expired' && !question) return { kind: 'end', events: [...resumed, decided, { type: 'run.expired', data: { attentionId } }] };
  const output = question ? { answered: false, reason: decision.reason.text } : `Denied by policy (${code}): ${decision.reason.text}`;
  return answerOutcome(state, call, { ok: false, output, summary: `denied: ${code}` }, false, [...resumed, decided]);
}

function resultEvent(call: PendingCall, tool: string, outcome: Pick<ToolOutcome, 'ok' | 'output' | 'summary'>, executed: boolean): RunEmit {
  return { type: 'run.tool_result', data: { callId: call.callId, tool, ok: outcome.ok, output: outcome.output, summary: outcome.summary.slice(0, 1_000), executed } };
}

/** The result of the last pending call closes the act phase: it carries a checkpoint. */
function phaseEnd(state: RunAggregate, call: PendingCall): Phase | undefined {
  return state.pending.every((pending) => pending.callId === call.callId) ? 'act' : undefined;
}

function answerOutcome(state: RunAggregate, call: PendingCall, outcome: Pick<ToolOutcome, 'ok' | 'output' | 'summary'>, executed: boolean, before: RunEmit[] = []): { kind: 'record'; events: RunEmit[]; checkpoint?: Phase } {
  const checkpoint = phaseEnd(state, call);
  return { kind: 'record', events: [...before, resultEvent(call, call.name, outcome, executed)], ...(checkpoint ? { checkpoint } : {}) };
}

function answer(state: RunAggregate, call: PendingCall, outcome: Pick<ToolOutcome, 'ok' | 'output' | 'summary'>, executed: boolean, before: RunEmit[] = []): RunIntent {
  return answerOutcome(state, call, outcome, executed, before);
}
