import type { AttentionState, AuthorizeResult, DecodedEvent, JsonValue } from '@packetagent/contracts';
import type { ModelTurn } from '@packetagent/providers';
import type { CallAuthorization, PlannedCall, ToolOutcome } from '@packetagent/tools';
import type { BudgetAnswer, BudgetAsk, BudgetRaise, PlanRequest } from '../run/run.intent';
import type { LedgerRefusal } from '../run/run.decider';

/**
 * What a run's shell reaches outside itself, one port per system, each bound to one run. The
 * production adapters are in ./adapters; the supervisor testkit has in-memory ones.
 */
export interface ModelPort {
  /** Nothing to reserve for a model priced at zero (a local server, a free script). */
  readonly free: boolean;
  estimateUsd(request: PlanRequest): number;
  complete(request: PlanRequest, signal: AbortSignal): Promise<ModelTurn>;
}

/** The credentials a decision granted, opened; or the one that needs an operator first (an OAuth connection to make again). */
export type CredentialsAnswer = { ok: true; values: Record<string, string> } | { ok: false; refusal: CredentialRefusal };

export interface CredentialRefusal {
  credential: string;
  reason: string;
}

/** A raised attention and how it stands now (raising the same one again answers the record already raised). */
export interface RaisedAttention {
  attentionId: string;
  state: AttentionState;
}

/** Policy and the vault: the decision for one call, the credentials it grants, and the attention inbox. */
export interface GuardPort {
  authorize(planned: PlannedCall, signal: AbortSignal): Promise<AuthorizeResult>;
  /** Each credential is opened for the URL `planned.audiences` names for it, where it names one. */
  credentials(decision: AuthorizeResult, planned: PlannedCall, signal: AbortSignal): Promise<CredentialsAnswer>;
  raiseAttention(kind: 'uncertain_effect' | 'run_unrecordable', planned: PlannedCall | null, details: JsonValue, signal: AbortSignal): Promise<string | null>;
  /** Asks a person to connect a credential again, for this call. */
  requestReconnect(planned: PlannedCall, refusal: CredentialRefusal, signal: AbortSignal): Promise<RaisedAttention>;
  /** Asks a person for more budget (a `budget_request` attention); the same ask again answers the record already raised. */
  requestBudget(ask: BudgetAsk, signal: AbortSignal): Promise<RaisedAttention>;
  /** How the budget request's attention stands, with who approved it and the role recorded with the approval. */
  budgetAnswer(attentionId: string, signal: AbortSignal): Promise<BudgetAnswer>;
}

export type BudgetRefusal = LedgerRefusal;

export interface BudgetPort {
  reserve(amounts: Array<{ unit: string; amount: number }>, key: string, signal: AbortSignal): Promise<{ id: string; refused: null } | { id: null; refused: BudgetRefusal }>;
  settle(reservationId: string | null, actual: Array<{ unit: string; amount: number }>): Promise<void>;
  /** Best effort: an unreleased hold expires at its TTL and is never credited twice. */
  release(reservationId: string | null): Promise<void>;
  /** Raises the run's own limit for an approved budget request, once per attention (a repeat answers the first raise). */
  raiseRunLimit(raise: { attentionId: string; amountMicroUsd: number; approvedBy: BudgetAnswer['approvedBy']; role: BudgetAnswer['role'] }, signal: AbortSignal): Promise<BudgetRaise>;
}

export interface EffectsPort {
  /** `computerGrant`: policy's grant for the key of the computer the call runs on, when it names one. */
  execute(planned: PlannedCall, authorization: CallAuthorization, call: { idempotencyKey: string; credentials: Record<string, string>; computerGrant?: string; signal: AbortSignal }): Promise<ToolOutcome>;
  /** Stops whatever may still be running for an effect the run gives up on (a sandboxed command whose caller died). */
  abandon(planned: PlannedCall, idempotencyKey: string): Promise<void>;
}

export interface NewRunEvent {
  id: string;
  type: string;
  data: unknown;
}

/** The run's own stream (only this supervisor writes it once claimed) and its control stream (intake writes operator requests there). */
export interface RunStreamPort {
  read(fromVersion: number): Promise<DecodedEvent[]>;
  /** Appends at `expectedVersion`; throws ConcurrencyError when someone else wrote first. */
  append(expectedVersion: number, events: NewRunEvent[]): Promise<void>;
  readControls(fromVersion: number): Promise<DecodedEvent[]>;
}

export interface TimersPort {
  setWallTimer(deadline: string): Promise<void>;
  cancelWallTimer(): Promise<void>;
}

/** Test wiring only: lets a recovery test kill the process at an exact point. Production passes none. */
export interface FaultPort {
  afterAppend(events: ReadonlyArray<{ type: string }>): void;
}

export interface RunPorts {
  model: ModelPort;
  guard: GuardPort;
  budget: BudgetPort;
  effects: EffectsPort;
  stream: RunStreamPort;
  timers: TimersPort;
  faults: FaultPort | null;
  now: () => Date;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}
