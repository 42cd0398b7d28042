import { MICRO_USD_PER_USD, type AuthorizeResult, type JsonValue, type RunExecutionEventData } from '@packetagent/contracts';
import type { ModelTurn } from '@packetagent/providers';
import { ToolAbortedError, type CallAuthorization, type PlannedCall, type ToolOutcome } from '@packetagent/tools';
import {
  abandonLost,
  abandonUncertain,
  afterBudgetAnswer,
  afterBudgetRaised,
  afterBudgetRefusal,
  afterCredentialRefused,
  afterDecision,
  afterExecution,
  afterInterruption,
  afterModelTurn,
  afterQuestion,
  budgetRefused,
  budgetRequested,
  modelFailed,
  preparedEvent,
} from '../run/run.decider';
import type { BudgetAsk, DecisionOutcome, ExecutionOutcome, PinnedRun, PlanRequest, RunEmit } from '../run/run.intent';
import type { EffectRecord, PendingCall } from '../run/run.state';
import type { CredentialRefusal, RunPorts } from './ports';
import type { RunRecorder } from './run-recorder';
import { RunInterruptedError, throwIfAborted } from './retry';

export interface StepContext {
  ports: RunPorts;
  recorder: RunRecorder;
  pinned: PinnedRun;
  signal: AbortSignal;
}

/** How a step ends: the loop goes on, the run parks, or it ends with these (not yet written) events. */
export type StepResult = { kind: 'continue' } | { kind: 'waiting'; waitingOn: string | null } | { kind: 'end'; events: RunEmit[] };

const CONTINUE: StepResult = { kind: 'continue' };

/** Plan: reserve the turn's estimated cost, call the model, settle to the actual, record the turn. */
export async function planTurn({ ports, recorder, pinned, signal }: StepContext, request: PlanRequest): Promise<StepResult> {
  await recorder.ensureClaimed();
  const claim = recorder.state.claims;
  let reservationId: string | null = null;
  if (!ports.model.free) {
    const amount = Math.max(1, Math.ceil(ports.model.estimateUsd(request) * MICRO_USD_PER_USD));
    const reservation = await ports.budget.reserve([{ unit: 'usd', amount }], `model:${request.iteration}:${claim}`, signal);
    if (reservation.refused) {
      const refused = afterBudgetRefusal(recorder.state, pinned, reservation.refused);
      return refused.kind === 'end' ? refused : requestBudget({ ports, recorder, pinned, signal }, refused.ask);
    }
    reservationId = reservation.id;
  }
  let turn: ModelTurn;
  try {
    turn = await ports.model.complete(request, signal);
  } catch (error) {
    await ports.budget.release(reservationId);
    if (signal.aborted) throw new RunInterruptedError(String(signal.reason));
    return { kind: 'end', events: modelFailed(error instanceof Error ? error.message : String(error)) };
  }
  await ports.budget.settle(reservationId, [{ unit: 'usd', amount: Math.round(turn.costUsd * MICRO_USD_PER_USD) }]);
  const outcome = afterModelTurn(recorder.state, pinned, request, turn);
  if (outcome.kind === 'end') return outcome;
  await recorder.commit(outcome.events, outcome.checkpoint);
  return CONTINUE;
}

/**
 * The run reached its own cost limit: a person is asked for more, and the request is recorded
 * with the run waiting on it. The next decision reads the answer at once, so an attention
 * answered before the run recorded its wait (raised again after a crash) is not missed.
 */
export async function requestBudget({ ports, recorder }: StepContext, ask: BudgetAsk): Promise<StepResult> {
  const attention = await ports.guard.requestBudget(ask, new AbortController().signal);
  await recorder.commit(budgetRequested(ask, attention.attentionId));
  return CONTINUE;
}

/**
 * The answer to the run's budget request. Approved: the ledger raises the run's limit, once per
 * attention, so a drive that dies between the raise and its record raises nothing twice; the
 * next one gets the same raise back and records it.
 */
export async function awaitBudget({ ports, recorder, signal }: StepContext, request: RunExecutionEventData<'run.budget_requested'>): Promise<StepResult> {
  const answer = await ports.guard.budgetAnswer(request.attentionId, signal);
  const outcome = afterBudgetAnswer(recorder.state, request, answer);
  if (outcome.kind !== 'raise') return waitOrEnd(recorder, outcome);
  const raise = await ports.budget.raiseRunLimit({ attentionId: request.attentionId, amountMicroUsd: outcome.amountMicroUsd, approvedBy: answer.approvedBy, role: answer.role }, signal);
  const raised = afterBudgetRaised(recorder.state, request, answer, raise);
  if (raised.kind === 'end') return raised;
  await recorder.commit(raised.events);
  return CONTINUE;
}

/** Act: policy's decision for the call, then the call itself; a mutating one between its effect receipts. */
export async function actOnCall(context: StepContext, call: PendingCall, planned: PlannedCall, retry: EffectRecord | null): Promise<StepResult> {
  const decision = await context.ports.guard.authorize(planned, context.signal);
  return carryOut(context, call, planned, decision, afterDecision(context.recorder.state, call, planned, decision, retry));
}

/** ask_owner: a question answered through policy's approval path. */
export async function askOwner(context: StepContext, call: PendingCall, planned: PlannedCall): Promise<StepResult> {
  const decision = await context.ports.guard.authorize(planned, context.signal);
  return carryOut(context, call, planned, decision, afterQuestion(context.recorder.state, call, planned, decision));
}

/** A prepared effect whose outcome was never recorded and that may not be repeated: said so, with attention. */
export async function abandonUncertainEffect(context: StepContext, _call: PendingCall, planned: PlannedCall, effect: EffectRecord): Promise<StepResult> {
  await context.recorder.ensureClaimed();
  const attentionId = await giveUp(context, planned, effect, {});
  return { kind: 'end', events: abandonUncertain(effect, attentionId) };
}

/** A call whose link to its computer broke while it ran, and that may not be repeated: its receipt, then the end, with attention. */
async function abandonLostEffect(context: StepContext, planned: PlannedCall, lost: Extract<ExecutionOutcome, { kind: 'abandon' }>): Promise<StepResult> {
  const attentionId = await giveUp(context, planned, lost.effect, { cause: 'transport_lost', computer: planned.computer, detail: lost.detail });
  return { kind: 'end', events: [...lost.events, ...abandonLost(lost.effect, lost.detail, attentionId)] };
}

/**
 * Stops what an effect the run gives up on may still be doing, then tells a person (the attention's
 * id, or null when it could not be raised: the run ends all the same).
 */
async function giveUp({ ports, recorder, signal }: StepContext, planned: PlannedCall, effect: EffectRecord, evidence: Record<string, JsonValue>): Promise<string | null> {
  // Under this replica's claim, so no one else drives the run: what the lost call started may stop.
  await ports.effects.abandon(planned, effect.idempotencyKey).catch((error: unknown) => {
    ports.log('warn', 'could not stop what an uncertain effect may still be doing', { runId: recorder.state.runId, effectId: effect.effectId, error: error instanceof Error ? error.message : String(error) });
  });
  return ports.guard
    .raiseAttention('uncertain_effect', planned, { ...evidence, effectId: effect.effectId, idempotencyKey: effect.idempotencyKey, requestDigest: effect.requestDigest, request: planned.redactedArgs }, signal)
    .catch((error: unknown) => {
      ports.log('error', 'could not raise attention for an uncertain effect', { runId: recorder.state.runId, error: error instanceof Error ? error.message : String(error) });
      return null;
    });
}

/** What the tool's outcome means, carried out: recorded, repeated by the next decision, or the end of the run. */
async function recordExecution(context: StepContext, planned: PlannedCall, outcome: ExecutionOutcome): Promise<StepResult> {
  switch (outcome.kind) {
    case 'record':
      await context.recorder.commit(outcome.events, outcome.checkpoint);
      return CONTINUE;
    case 'retry':
      return CONTINUE;
    case 'abandon':
      return abandonLostEffect(context, planned, outcome);
  }
}

type WaitOrEnd = { kind: 'idle'; waitingOn: string | null } | { kind: 'park'; events: RunEmit[]; waitingOn: string | null } | { kind: 'end'; events: RunEmit[] };

/** Where an outcome that waits or ends leaves the step: waiting (its wait recorded first when it parks), or at the end. */
async function waitOrEnd(recorder: RunRecorder, outcome: WaitOrEnd): Promise<StepResult> {
  switch (outcome.kind) {
    case 'idle':
      return { kind: 'waiting', waitingOn: outcome.waitingOn };
    case 'park':
      await recorder.commit(outcome.events);
      return { kind: 'waiting', waitingOn: outcome.waitingOn };
    case 'end':
      return { kind: 'end', events: outcome.events };
  }
}

async function carryOut(context: StepContext, call: PendingCall, planned: PlannedCall, decision: AuthorizeResult, outcome: DecisionOutcome): Promise<StepResult> {
  const { ports, recorder, signal } = context;
  if (outcome.kind === 'record') {
    await recorder.commit(outcome.events, outcome.checkpoint);
    return CONTINUE;
  }
  if (outcome.kind !== 'execute') return waitOrEnd(recorder, outcome);
  const opened = await ports.guard.credentials(decision, planned, signal);
  if (!opened.ok) return waitForReconnect(context, call, planned, outcome.events, opened.refusal);
  const grants: Grants = { credentials: opened.values, ...(decision.computerGrant ? { computerGrant: decision.computerGrant } : {}) };
  const authorization: CallAuthorization = { decision: decision.decision, tool: planned.tool, verb: planned.verb, resource: planned.resource, callDigest: planned.callDigest };
  const { effect } = outcome;
  if (!effect) {
    await recorder.commit(outcome.events);
    const result = await execute(context, planned, authorization, grants, `${recorder.state.runId}:${call.callId}`);
    return recordExecution(context, planned, afterExecution(recorder.state, call, planned, result, null));
  }
  let reservationId: string | null = null;
  if (outcome.reserveAction) {
    const action = await ports.budget.reserve([{ unit: actionUnit(planned), amount: 1 }], `action:${call.callId}`, signal);
    if (action.refused) return { kind: 'end', events: [...outcome.events, ...budgetRefused(action.refused)] };
    reservationId = action.id;
  }
  await recorder.commit([...outcome.events, preparedEvent(effect)]);
  let result: ToolOutcome;
  try {
    result = await execute(context, planned, authorization, grants, effect.idempotencyKey);
  } catch (error) {
    if (!(error instanceof ToolAbortedError || signal.aborted)) throw error;
    const interrupted = afterInterruption(call, planned, effect);
    await recorder.commit(interrupted.events, interrupted.checkpoint);
    await ports.budget.release(reservationId);
    throw new RunInterruptedError(String(signal.reason ?? 'interrupted'));
  }
  const step = await recordExecution(context, planned, afterExecution(recorder.state, call, planned, result, effect));
  // A lost outcome may have taken effect: it counts against the action budget like a done one.
  if (result.ok || result.lost) await ports.budget.settle(reservationId, [{ unit: actionUnit(planned), amount: 1 }]);
  else await ports.budget.release(reservationId);
  return step;
}

/** A credential the call needs must be connected again: a person is asked, and the run parks (or ends, once they answered). */
async function waitForReconnect(context: StepContext, call: PendingCall, planned: PlannedCall, before: RunEmit[], refusal: CredentialRefusal): Promise<StepResult> {
  const { ports, recorder, signal } = context;
  const attention = await ports.guard.requestReconnect(planned, refusal, signal);
  ports.log('warn', 'a credential the call needs must be connected again', { runId: recorder.state.runId, credential: refusal.credential, attentionId: attention.attentionId, state: attention.state });
  const outcome = afterCredentialRefused(recorder.state, call, before, refusal, attention);
  switch (outcome.kind) {
    case 'park':
      await recorder.commit(outcome.events);
      return { kind: 'waiting', waitingOn: outcome.waitingOn };
    case 'end':
      return { kind: 'end', events: outcome.events };
    default:
      return { kind: 'waiting', waitingOn: attention.attentionId };
  }
}

/** What policy's allow gave the call: the credentials it opened, and the grant for its computer's key. */
interface Grants {
  credentials: Record<string, string>;
  computerGrant?: string;
}

function execute(context: StepContext, planned: PlannedCall, authorization: CallAuthorization, grants: Grants, idempotencyKey: string): Promise<ToolOutcome> {
  throwIfAborted(context.signal);
  return context.ports.effects.execute(planned, authorization, { idempotencyKey, ...grants, signal: context.signal });
}

/** The action unit a call counts against: `count:<tool>`, and `count:mcp:<server>/<tool>` for an MCP tool. */
function actionUnit(planned: PlannedCall): string {
  return planned.tool === 'mcp' && planned.resource ? `count:mcp:${planned.resource}` : `count:${planned.tool}`;
}
