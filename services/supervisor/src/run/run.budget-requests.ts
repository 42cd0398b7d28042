import { MICRO_USD_PER_USD, type JsonValue, type RunExecutionEventData } from '@packetagent/contracts';
import type { BudgetAnswer, BudgetAnswerOutcome, BudgetAsk, BudgetRaise, PinnedRun, RunEmit } from './run.intent';
import type { RunAggregate } from './run.state';

export function budgetRefused(refusal: { detail: string; scope: JsonValue | null }): RunEmit[] {
  return [{ type: 'run.budget_exhausted', data: { detail: refusal.detail, scope: refusal.scope } }];
}

// ----------------------------------------------------------------------------------------------
// Budget requests: a run at its own cost limit whose budget says `onExhausted: request` asks a
// person for more instead of ending. Only the run's own limit asks: the deployment's and the
// workspace's are shared by other runs, and running out of them ends the run as before.

/** The ledger's refusal of a reservation, with the refused scope's numbers when it gave them (micro-dollars). */
export interface LedgerRefusal {
  detail: string;
  scope: JsonValue | null;
  usage?: { kind: string; unit: string; reason: string; limit: number; spent: number; held: number; requested: number };
}

/** A model call the ledger refused: the end of the run, or a request for more when it is the run's own USD limit. */
export function afterBudgetRefusal(state: RunAggregate, pinned: PinnedRun, refusal: LedgerRefusal): { kind: 'end'; events: RunEmit[] } | { kind: 'request_budget'; ask: BudgetAsk } {
  const usage = refusal.usage;
  if (!requestsBudget(pinned) || !usage || usage.kind !== 'run' || usage.unit !== 'usd' || usage.reason !== 'budget_exhausted') return { kind: 'end', events: budgetRefused(refusal) };
  const spentUsd = (usage.spent + usage.held) / MICRO_USD_PER_USD;
  const limitUsd = usage.limit / MICRO_USD_PER_USD;
  const shortfallUsd = (usage.spent + usage.held + usage.requested - usage.limit) / MICRO_USD_PER_USD;
  const reason = `the next model call needs about $${(usage.requested / MICRO_USD_PER_USD).toFixed(6)}; the run has spent or holds $${spentUsd.toFixed(6)} of its $${limitUsd} limit`;
  return { kind: 'request_budget', ask: budgetAsk(state, pinned, { spentUsd, limitUsd, shortfallUsd, reason }) };
}

/** The attention for the request is raised: recorded, and the run waits on it. */
export function budgetRequested(ask: BudgetAsk, attentionId: string): RunEmit[] {
  return [
    { type: 'run.budget_requested', data: { attentionId, ...ask } },
    { type: 'run.waiting', data: { reason: 'budget', attentionId, callId: null } },
  ];
}

/** How the person answered: still waiting, the end of the run, or a raise for the ledger to make. */
export function afterBudgetAnswer(state: RunAggregate, request: RunExecutionEventData<'run.budget_requested'>, answer: BudgetAnswer): BudgetAnswerOutcome {
  const { attentionId } = request;
  switch (answer.state) {
    case 'open':
      if (state.waiting?.reason === 'budget' && state.waiting.attentionId === attentionId) return { kind: 'idle', waitingOn: attentionId };
      return { kind: 'park', events: [{ type: 'run.waiting', data: { reason: 'budget', attentionId, callId: null } }], waitingOn: attentionId };
    case 'approved':
      return { kind: 'raise', amountMicroUsd: Math.max(1, Math.round(request.requestedUsd * MICRO_USD_PER_USD)) };
    default:
      return { kind: 'end', events: [{ type: 'run.budget_exhausted', data: { detail: `${request.reason}; the request for $${request.requestedUsd} more was ${answer.state}`.slice(0, 2_000), scope: null } }] };
  }
}

/** The ledger raised the run's limit (by what was asked, or less when the deployment or workspace had less left). */
export function afterBudgetRaised(state: RunAggregate, request: RunExecutionEventData<'run.budget_requested'>, answer: BudgetAnswer, raise: BudgetRaise): { kind: 'record'; events: RunEmit[] } | { kind: 'end'; events: RunEmit[] } {
  const raised: RunEmit = {
    type: 'run.budget_raised',
    data: {
      attentionId: request.attentionId,
      requestedUsd: request.requestedUsd,
      raisedUsd: raise.raisedUsd,
      limitUsd: raise.limitUsd,
      approvedBy: answer.approvedBy,
      approverRole: answer.role,
      cappedBy: raise.cappedBy,
    },
  };
  if (raise.raisedUsd <= 0) {
    const detail = `${request.reason}; the request for $${request.requestedUsd} more was approved, but what the deployment or workspace has left allows no more`;
    return { kind: 'end', events: [raised, { type: 'run.budget_exhausted', data: { detail: detail.slice(0, 2_000), scope: raise.cappedBy } }] };
  }
  const resumed: RunEmit[] = state.waiting ? [{ type: 'run.resumed', data: { reason: 'budget_raised' } }] : [];
  return { kind: 'record', events: [raised, ...resumed] };
}

export function requestsBudget(pinned: PinnedRun): boolean {
  return pinned.definition.budgets.onExhausted === 'request';
}

/** What to ask for: `requestStepUsd` (or the run's limit again), and at least what the next call lacks. */
export function budgetAsk(state: RunAggregate, pinned: PinnedRun, at: { spentUsd: number; limitUsd: number; shortfallUsd: number; reason: string }): BudgetAsk {
  const { budgets } = pinned.definition;
  const step = budgets.requestStepUsd ?? budgets.perRunUsd ?? at.limitUsd;
  const requestedUsd = Math.ceil(Math.max(step, at.shortfallUsd) * MICRO_USD_PER_USD) / MICRO_USD_PER_USD;
  return { request: state.budgetRequests + 1, requestedUsd, spentUsd: round6(at.spentUsd), limitUsd: at.limitUsd, reason: at.reason.slice(0, 1_000) };
}

function round6(usd: number): number {
  return Math.round(usd * MICRO_USD_PER_USD) / MICRO_USD_PER_USD;
}
