import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { RunMigratedV1 } from './run-migration.v1';
import { PayloadRefSchema } from '../payloads/payload-ref';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { RoleSchema } from '../identity/roles';

/**
 * Events the supervisor appends to a run's stream (`run-<runId>`), after intake's
 * `run.admitted`. The stream version is the fence: a replica whose append fails has lost the
 * run and stops at once.
 */

const id = z.string().min(1).max(200);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const usd = z.number().nonnegative();

export const ModelRefSchema = z.object({
  provider: z.string(),
  model: z.string(),
  /** A scripted provider replays a script: never shown as a model. */
  scripted: z.boolean(),
});

export const RunBoundsSchema = z.object({
  maxWallSeconds: z.number().int().positive(),
  maxIterations: z.number().int().positive(),
  maxToolCalls: z.number().int().nonnegative(),
  /** From the run's budget (`perRunUsd`); null when only the ledger's other scopes limit cost. */
  maxCostUsd: usd.nullable(),
});
export type RunBounds = z.infer<typeof RunBoundsSchema>;

/** First execution of the run: what it runs with. */
export const RunStartedV1 = z.object({
  model: ModelRefSchema,
  bounds: RunBoundsSchema,
  /** Wall-time limit as an instant, enforced by a scheduler timer and between steps. */
  deadline: z.iso.datetime(),
  exit: z.enum(['finish', 'output_schema']),
  tools: z.array(z.string()),
});

/** A replica took the run (first start or recovery); appended at the stream's version, it fences out any earlier holder. */
export const RunClaimedV1 = z.object({
  replica: z.string().max(200),
  claim: z.number().int().positive(),
  /** Stream version of the checkpoint the state was verified against, if any. */
  fromCheckpoint: z.number().int().positive().nullable(),
});

export const ToolCallRecordSchema = z.object({
  id: z.string().max(200),
  name: z.string().max(200),
  arguments: z.union([PayloadRefSchema, z.record(z.string(), z.json()).nullable()]),
  malformed: z.string().max(1000).optional(),
});

export const RunModelTurnV1 = z.object({
  iteration: z.number().int().positive(),
  model: ModelRefSchema,
  text: z.union([z.string(), PayloadRefSchema]),
  toolCalls: z.array(ToolCallRecordSchema),
  stopReason: z.string(),
  usage: z.object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() }),
  costUsd: usd,
  attempts: z.number().int().positive(),
  durationMs: z.number().int().nonnegative(),
  /** The provider's own form of the turn, replayed verbatim to the same provider. */
  native: z.union([PayloadRefSchema, z.json()]),
});

export const RunToolDecidedV1 = z.object({
  callId: id,
  tool: z.string(),
  verb: z.string(),
  /** Redacted. */
  resource: z.string().nullable(),
  callDigest: sha256,
  decision: z.enum(['allow', 'deny', 'approval_required']),
  reason: z.object({ code: z.string(), text: z.string() }),
  attentionId: z.string().nullable(),
});

export const EffectPreparedV1 = z.object({
  effectId: id,
  callId: id,
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullable(),
  /** Sent with the call (e.g. as Idempotency-Key): the same on every attempt of this effect. */
  idempotencyKey: z.string(),
  /** SHA-256 of the redacted request. */
  requestDigest: sha256,
  idempotentByKey: z.boolean(),
  attempt: z.number().int().positive(),
});
export const EffectCompletedV1 = z.object({ effectId: id, callId: id, summary: z.string().max(1000) });
export const EffectFailedV1 = z.object({
  effectId: id,
  callId: id,
  error: z.object({ code: z.string(), message: z.string().max(1000) }),
  /** False when the call was cut off and whether the far side acted is not known. */
  outcomeKnown: z.boolean(),
});

/** The answer a tool call got, as the model will see it (bounded). */
export const RunToolResultV1 = z.object({
  callId: id,
  tool: z.string(),
  ok: z.boolean(),
  output: z.union([PayloadRefSchema, z.json()]),
  summary: z.string().max(1000),
  /** The call did not run: refused, invalid or a correction. */
  executed: z.boolean(),
});

export const RunCriteriaSetV1 = z.object({ criteria: z.array(z.string().max(1000)).max(50), reason: z.string().max(1000).nullable(), callId: id });

export const RunCompactedV1 = z.object({ droppedMessages: z.number().int().positive(), estimatedTokens: z.number().int().nonnegative() });

/**
 * `reconnect`: a credential the next call needs (an OAuth connection) waits for an operator to
 * connect it again. `budget`: the run reached its own cost limit and asked a person for more.
 */
export const WAIT_REASONS = ['approval', 'question', 'paused', 'reconnect', 'budget'] as const;
export const RunWaitingV1 = z.object({
  reason: z.enum(WAIT_REASONS),
  attentionId: z.string().nullable(),
  callId: z.string().nullable(),
});
export const RunResumedV1 = z.object({ reason: z.string().max(200) });

/**
 * The run's cost reached its own limit (`perRunUsd`, or the next model call would pass it) and
 * its budget says `onExhausted: request`: a `budget_request` attention asks a person for
 * `requestedUsd` more. Deployment and workspace limits never ask; they end the run.
 */
export const RunBudgetRequestedV1 = z.object({
  attentionId: id,
  /** 1 for the run's first request, 2 for the next, and so on. */
  request: z.number().int().positive(),
  requestedUsd: usd,
  spentUsd: usd,
  limitUsd: usd,
  reason: z.string().max(1000),
});

/**
 * The request was approved and the ledger raised the run's limit to `limitUsd` (by `raisedUsd`:
 * what was asked, or less when the deployment's or workspace's remaining budget capped it and
 * the approver's role lacks deployment-control; `cappedBy` names that scope).
 */
export const RunBudgetRaisedV1 = z.object({
  attentionId: id,
  requestedUsd: usd,
  raisedUsd: usd,
  limitUsd: usd,
  approvedBy: ActorSchema.nullable(),
  /** As recorded with the approval; null when it recorded none (treated as lacking deployment-control). */
  approverRole: RoleSchema.nullable(),
  cappedBy: z.json().nullable(),
});

/** A digest-linked snapshot of the run's state, written at the end of every phase. */
export const RunCheckpointV1 = z.object({
  seq: z.number().int().positive(),
  phase: z.enum(['plan', 'act']),
  iteration: z.number().int().nonnegative(),
  toolCalls: z.number().int().nonnegative(),
  costUsd: usd,
  remaining: z.object({ iterations: z.number().int(), toolCalls: z.number().int(), costUsd: usd.nullable(), wallSeconds: z.number() }),
  /** SHA-256 of the canonical folded state this checkpoint stands for. */
  stateDigest: sha256,
  previousDigest: sha256.nullable(),
  /** SHA-256 over previousDigest and stateDigest: the chain link. */
  digest: sha256,
});

export const RunSucceededV1 = z.object({ summary: z.string().max(4000), output: z.json() });

export const RUN_FAILURE_REASONS = [
  'iteration_limit',
  'tool_call_limit',
  'stalled',
  'context_exhausted',
  'model_error',
  'invalid_output',
  'definition_unavailable',
  'input_unavailable',
  'internal_error',
  /** A credential the next call needs could not be had: the operator declined to reconnect it, or its attention expired. */
  'credential_unavailable',
] as const;
export const RunFailedV1 = z.object({ reason: z.enum(RUN_FAILURE_REASONS), detail: z.string().max(2000) });

/** `transport_lost`: the link to a computer broke while a command ran there (its outcome is not known). */
export const ABANDON_CAUSES = ['uncertain_effect', 'transport_lost', 'unreplayable', 'quarantined', 'unrecordable'] as const;
export const RunAbandonedV1 = z.object({
  cause: z.enum(ABANDON_CAUSES),
  detail: z.string().max(2000),
  /** The effect whose outcome is not known, with its receipt. */
  effect: z.object({ effectId: id, callId: id, tool: z.string(), verb: z.string(), resource: z.string().nullable(), idempotencyKey: z.string(), requestDigest: sha256 }).nullable(),
  attentionId: z.string().nullable(),
});
/**
 * The person who approved a pending call changed its arguments: from here on the call is the
 * edited one (its digest `editedDigest`), and policy allows it under the same attention.
 */
export const RunCallEditedV1 = z.object({
  callId: z.string().max(200),
  attentionId: id,
  originalDigest: sha256,
  editedDigest: sha256,
  arguments: z.record(z.string(), z.json()),
  editor: z.object({ kind: z.string().max(50), id: z.string().max(200) }),
});
export const RunRejectedV1 = z.object({ attentionId: id, reason: z.string().max(1000) });
export const RunExpiredV1 = z.object({ attentionId: id });
export const RunBudgetExhaustedV1 = z.object({ detail: z.string().max(2000), scope: z.json().nullable() });
export const RunTimedOutV1 = z.object({ deadline: z.iso.datetime() });

export const RunExecutionEvents = {
  'run.started': RunStartedV1,
  'run.claimed': RunClaimedV1,
  'run.model_turn': RunModelTurnV1,
  'run.tool_decided': RunToolDecidedV1,
  'run.call_edited': RunCallEditedV1,
  'effect.prepared': EffectPreparedV1,
  'effect.completed': EffectCompletedV1,
  'effect.failed': EffectFailedV1,
  'run.tool_result': RunToolResultV1,
  'run.criteria_set': RunCriteriaSetV1,
  'run.compacted': RunCompactedV1,
  'run.waiting': RunWaitingV1,
  'run.resumed': RunResumedV1,
  'run.budget_requested': RunBudgetRequestedV1,
  'run.budget_raised': RunBudgetRaisedV1,
  'run.checkpoint': RunCheckpointV1,
  'run.succeeded': RunSucceededV1,
  'run.failed': RunFailedV1,
  'run.abandoned': RunAbandonedV1,
  'run.rejected': RunRejectedV1,
  'run.expired': RunExpiredV1,
  'run.budget_exhausted': RunBudgetExhaustedV1,
  'run.timed_out': RunTimedOutV1,
  'run.migrated': RunMigratedV1,
} as const;

export type RunExecutionEventType = keyof typeof RunExecutionEvents;
export type RunExecutionEventData<T extends RunExecutionEventType> = z.infer<(typeof RunExecutionEvents)[T]>;

/** Purpose of the scheduler timer that wakes a run at its wall-time limit. */
export const RUN_WALL_TIME_PURPOSE = 'run_wall_time';

export function registerRunExecutionEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(RunExecutionEvents);
}
