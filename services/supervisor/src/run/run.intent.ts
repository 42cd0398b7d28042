import type { McpCatalogue } from '@packetagent/tools';
import type {
  ActorRef,
  AttentionState,
  AuthorizeResult,
  IntakeEventData,
  JsonObject,
  JsonValue,
  Role,
  RunExecutionEventData,
  RunExecutionEventType,
  ToolName,
  WorkerDefinition,
} from '@packetagent/contracts';
import type { ChatMessage } from '@packetagent/providers';
import type { PlannedCall } from '@packetagent/tools';
import type { EffectRecord, PendingCall } from './run.state';

type OperatorType = 'run.stop_requested' | 'run.pause_requested' | 'run.resume_requested' | 'run.revoke_requested';

/** An event the supervisor appends to a run's stream. */
export type RunEmit =
  | { [K in RunExecutionEventType]: { type: K; data: RunExecutionEventData<K> } }[RunExecutionEventType]
  | { [K in OperatorType]: { type: K; data: IntakeEventData<K> } }[OperatorType]
  | { type: 'run.cancelled' | 'run.revoked'; data: { reason: string } };

/** The events that end a run. */
export type TerminalEmit = Extract<
  RunEmit,
  {
    type:
      | 'run.succeeded'
      | 'run.failed'
      | 'run.cancelled'
      | 'run.abandoned'
      | 'run.rejected'
      | 'run.expired'
      | 'run.revoked'
      | 'run.budget_exhausted'
      | 'run.timed_out';
  }
>;

/** What a budget request asks a person for, before its attention is raised. */
export interface BudgetAsk {
  /** 1 for the run's first request, and so on. */
  request: number;
  requestedUsd: number;
  spentUsd: number;
  limitUsd: number;
  reason: string;
}

/** How a budget request's attention was answered, as the shell read it. */
export interface BudgetAnswer {
  state: AttentionState;
  approvedBy: ActorRef | null;
  /** The approver's role as recorded with the approval; null when none was. */
  role: Role | null;
}

/** What the ledger did for an approved request (USD). */
export interface BudgetRaise {
  raisedUsd: number;
  limitUsd: number;
  cappedBy: JsonValue | null;
}

/** Which phase a checkpoint closes. */
export type Phase = 'plan' | 'act';

/** What the model is asked in a plan step. */
export interface PlanRequest {
  iteration: number;
  system: string;
  messages: ChatMessage[];
  tools: ToolName[];
  maxOutputTokens: number;
  outputSchema?: JsonObject;
}

/**
 * What the run does next. Each intent is either pure (its events are known: `start`, `record`,
 * `end`, `park`) or needs one port's answer first (`plan`: the model; `act` and `ask`: the
 * guard; `abandon`: the attention inbox), which the follow-up functions of the decider turn
 * into events.
 */
export type RunIntent =
  | { kind: 'done' }
  /** Not admitted to execution yet, or parked until an answer or a resume: nothing to do. */
  | { kind: 'idle'; waitingOn: string | null }
  | { kind: 'start'; events: RunEmit[]; deadline: string }
  | { kind: 'record'; events: RunEmit[]; checkpoint?: Phase }
  | { kind: 'end'; events: RunEmit[] }
  | { kind: 'park'; events: RunEmit[]; waitingOn: string | null }
  | { kind: 'plan'; request: PlanRequest }
  /** A tool call through policy, budget and the effect log; `retry` when a prepared effect is repeated by key. */
  | { kind: 'act'; call: PendingCall; planned: PlannedCall; retry: EffectRecord | null }
  /** ask_owner: a question to a person, through policy's approval path. */
  | { kind: 'ask'; call: PendingCall; planned: PlannedCall }
  /** A prepared effect with no recorded outcome that may not be repeated. */
  | { kind: 'abandon'; call: PendingCall; planned: PlannedCall; effect: EffectRecord }
  /** The run reached its own cost limit and asks a person for more (a `budget_request` attention). */
  | { kind: 'request_budget'; ask: BudgetAsk }
  /** The budget request it asked: read the answer, and raise the limit through the ledger once approved. */
  | { kind: 'await_budget'; request: RunExecutionEventData<'run.budget_requested'> };

/** A budget request's answer, turned into the run's next move (`raise`: the ledger raises the limit first). */
export type BudgetAnswerOutcome =
  | { kind: 'idle'; waitingOn: string }
  | { kind: 'park'; events: RunEmit[]; waitingOn: string }
  | { kind: 'end'; events: RunEmit[] }
  | { kind: 'raise'; amountMicroUsd: number };

/** What the guard answered, turned into the run's next move. */
export type DecisionOutcome =
  | { kind: 'idle'; waitingOn: string | null }
  | { kind: 'park'; events: RunEmit[]; waitingOn: string | null }
  | { kind: 'end'; events: RunEmit[] }
  | { kind: 'record'; events: RunEmit[]; checkpoint?: Phase }
  /** Allowed: record `events`, then run the call; mutating calls go through `effect`. */
  | { kind: 'execute'; events: RunEmit[]; effect: EffectRecord | null; reserveAction: boolean };

/** What the tool's outcome means for the run. */
export type ExecutionOutcome =
  | { kind: 'record'; events: RunEmit[]; checkpoint?: Phase }
  /** Lost, and repeatable by key: nothing is recorded, the effect stays prepared, and the next decision repeats it. */
  | { kind: 'retry' }
  /** Lost, and not repeatable: `events` say so, and the run ends abandoned once a person is told (abandonLost). */
  | { kind: 'abandon'; events: RunEmit[]; effect: EffectRecord; detail: string };

/** The fixed inputs of every decision: the pinned definition, the model's limits, tool planning and the supervisor's governors. */
export interface PinnedRun {
  definition: WorkerDefinition;
  model: {
    provider: string;
    model: string;
    scripted: boolean;
    contextWindow: number;
    maxOutputTokens: number;
    structuredOutput: boolean;
  };
  /** Parses a tool call into its operation (pure); throws ToolArgumentsError for bad arguments. */
  plan: (callId: string, name: string, args: unknown) => PlannedCall;
  /** The MCP tools the run may call (its version's pinned tools its grants cover). */
  mcp: McpCatalogue;
  task: string;
  stallTurns: number;
  compactAtRatio: number;
}

export type { AuthorizeResult };
