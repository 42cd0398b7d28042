import { MICRO_USD_PER_USD, type AuthorizeResult } from '@packetagent/contracts';
import type { ModelTurn } from '@packetagent/providers';
import { ToolAbortedError, type CallAuthorization, type PlannedCall, type ToolOutcome } from '@packetagent/tools';
import { abandonUncertain, afterDecision, afterExecution, afterInterruption, afterModelTurn, afterQuestion, budgetRefused, modelFailed, preparedEvent } from '../run/run.decider';
import type { DecisionOutcome, PinnedRun, PlanRequest, RunEmit } from '../run/run.intent';
import type { EffectRecord, PendingCall } from '../run/run.state';
import type { RunPorts } from './ports';
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
    if (reservation.refused) return { kind: 'end', events: budgetRefused(reservation.refused) };
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
export async function abandonUncertainEffect({ ports, recorder, signal }: StepContext, _call: PendingCall, planned: PlannedCall, effect: EffectRecord): Promise<StepResult> {
  await recorder.ensureClaimed();
  // Under this replica's claim, so no one else drives the run: what the lost call started may stop.
  await ports.effects.abandon(planned, effect.idempotencyKey).catch((error: unknown) => {
    ports.log('warn', 'could not stop what an uncertain effect may still be doing', { runId: recorder.state.runId, effectId: effect.effectId, error: error instanceof Error ? error.message : String(error) });
  });
  const attentionId = await ports.guard
    .raiseAttention('uncertain_effect', planned, { effectId: effect.effectId, idempotencyKey: effect.idempotencyKey, requestDigest: effect.requestDigest, request: planned.redactedArgs }, signal)
    .catch((error: unknown) => {
      ports.log('error', 'could not raise attention for an uncertain effect', { runId: recorder.state.runId, error: error instanceof Error ? error.message : String(error) });
      return null;
    });
  return { kind: 'end', events: abandonUncertain(effect, attentionId) };
}

async function carryOut(context: StepContext, call: PendingCall, planned: PlannedCall, decision: AuthorizeResult, outcome: DecisionOutcome): Promise<StepResult> {
  const { ports, recorder, signal } = context;
  switch (outcome.kind) {
    case 'idle':
      return { kind: 'waiting', waitingOn: outcome.waitingOn };
    case 'park':
      await recorder.commit(outcome.events);
      return { kind: 'waiting', waitingOn: outcome.waitingOn };
    case 'end':
      return { kind: 'end', events: outcome.events };
    case 'record':
      await recorder.commit(outcome.events, outcome.checkpoint);
      return CONTINUE;
    case 'execute':
      break;
  }
  const credentials = await ports.guard.credentials(decision, signal);
  const authorization: CallAuthorization = { decision: decision.decision, tool: planned.tool, verb: planned.verb, resource: planned.resource, callDigest: planned.callDigest };
  const { effect } = outcome;
  if (!effect) {
    await recorder.commit(outcome.events);
    const result = await execute(context, planned, authorization, credentials, `${recorder.state.runId}:${call.callId}`);
    const recorded = afterExecution(recorder.state, call, planned, result, null);
    await recorder.commit(recorded.events, recorded.checkpoint);
    return CONTINUE;
  }
  let reservationId: string | null = null;
  if (outcome.reserveAction) {
    const action = await ports.budget.reserve([{ unit: `count:${planned.tool}`, amount: 1 }], `action:${call.callId}`, signal);
    if (action.refused) return { kind: 'end', events: [...outcome.events, ...budgetRefused(action.refused)] };
    reservationId = action.id;
  }
  await recorder.commit([...outcome.events, preparedEvent(effect)]);
  let result: ToolOutcome;
  try {
    result = await execute(context, planned, authorization, credentials, effect.idempotencyKey);
  } catch (error) {
    if (!(error instanceof ToolAbortedError || signal.aborted)) throw error;
    const interrupted = afterInterruption(call, planned, effect);
    await recorder.commit(interrupted.events, interrupted.checkpoint);
    await ports.budget.release(reservationId);
    throw new RunInterruptedError(String(signal.reason ?? 'interrupted'));
  }
  const recorded = afterExecution(recorder.state, call, planned, result, effect);
  await recorder.commit(recorded.events, recorded.checkpoint);
  if (result.ok) await ports.budget.settle(reservationId, [{ unit: `count:${planned.tool}`, amount: 1 }]);
  else await ports.budget.release(reservationId);
  return CONTINUE;
}

function execute(context: StepContext, planned: PlannedCall, authorization: CallAuthorization, credentials: Record<string, string>, idempotencyKey: string): Promise<ToolOutcome> {
  throwIfAborted(context.signal);
  return context.ports.effects.execute(planned, authorization, { idempotencyKey, credentials, signal: context.signal });
}
