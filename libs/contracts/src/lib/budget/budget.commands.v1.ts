import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { RoleSchema } from '../identity/roles';
import { BudgetAmountSchema, BudgetScopeKindSchema, BudgetScopeSchema } from './budget.events.v1';

const workspaceId = z.string().regex(Identifiers.workspace);
const id = z.string().min(1).max(200);
const amount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const serviceActor = { kind: 'service', id: 'budget' } as const;
const actor = ActorSchema.default(serviceActor);

function uniqueUnits(amounts: { unit: string }[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  amounts.forEach((entry, index) => {
    if (seen.has(entry.unit)) ctx.addIssue({ code: 'custom', path: [index, 'unit'], message: `unit ${entry.unit} appears twice` });
    seen.add(entry.unit);
  });
}

/** Codes of the errors the budget commands answer with (refusals of a reservation are answers, not errors). */
export const BudgetErrorCodes = {
  /** No `run.admitted` for this run has reached the budget service yet; retry shortly. */
  runNotFound: 'budget_run_not_found',
  /** The limits of the run's deployment have not reached the budget service yet; retry shortly. */
  limitsNotFound: 'budget_limits_not_found',
  reservationNotFound: 'reservation_not_found',
  /** The reservation was settled, released or expired already: its hold can not move again. */
  reservationState: 'reservation_state_conflict',
  /** The idempotency key was used for a reservation of another run or other amounts. */
  idempotencyConflict: 'budget_idempotency_conflict',
  scopeNotFound: 'budget_scope_not_found',
  /** raiseRunLimit: the attention already raised this run's limit by another amount, or another run's. */
  raiseConflict: 'budget_raise_conflict',
} as const;

export const ReservationStateSchema = z.enum(['held', 'settled', 'released', 'expired']);
export type ReservationState = z.infer<typeof ReservationStateSchema>;

export const ReservationHeldSchema = z.object({
  reservationId: id,
  state: ReservationStateSchema,
  expiresAt: z.iso.datetime({ offset: true }),
  /** True when the idempotency key named an existing reservation, which is answered as it is now. */
  duplicate: z.boolean(),
});

/** Why nothing was held, naming the first scope that had no room (amounts in the scope's unit). */
export const ReservationRefusedSchema = z.object({
  state: z.literal('refused'),
  reason: z.enum(['budget_exhausted', 'scope_blocked']),
  scope: BudgetScopeSchema,
  limit: amount,
  spent: amount,
  held: amount,
  requested: amount,
});
export type ReservationRefused = z.infer<typeof ReservationRefusedSchema>;

export const ReserveResultSchema = z.union([ReservationRefusedSchema, ReservationHeldSchema]);
export type ReserveResult = z.infer<typeof ReserveResultSchema>;

export const ScopeUsageSchema = BudgetScopeSchema.extend({
  limit: amount,
  spent: amount,
  held: amount,
  /** Set while an overspend blocks the scope, until an operator reviews it. */
  blockedAt: z.iso.datetime({ offset: true }).nullable(),
});
export type ScopeUsage = z.infer<typeof ScopeUsageSchema>;

export const RunLimitRaiseSchema = z.object({
  attentionId: id,
  scope: BudgetScopeSchema,
  requested: amount,
  /** What the limit grew by: `requested`, or less when `cappedBy` had less left. */
  raised: amount,
  limitBefore: amount,
  limitAfter: amount,
  cappedBy: BudgetScopeSchema.nullable(),
  /** True when this attention had raised the limit already: the first answer, unchanged. */
  duplicate: z.boolean(),
});
export type RunLimitRaise = z.infer<typeof RunLimitRaiseSchema>;

export const BudgetCommands = {
  /**
   * Holds `amounts` in every scope of the run that limits their units (the run, its deployment,
   * its workspace), all or none. The same idempotency key answers the same reservation.
   */
  reserve: defineCommand(
    'budget.reserve',
    z.object({
      workspaceId,
      runId: id,
      amounts: z.array(BudgetAmountSchema).min(1).max(20).superRefine(uniqueUnits),
      ttlSeconds: z.number().int().min(1).max(7 * 86_400),
      idempotencyKey: z.string().min(1).max(200),
      actor,
    }),
    ReserveResultSchema,
  ),
  /** Turns the hold into spend. An actual above the hold is recorded and blocks the unit's scopes until reviewed. */
  settle: defineCommand(
    'budget.settle',
    z.object({ workspaceId, reservationId: id, actual: z.array(BudgetAmountSchema).max(20).superRefine(uniqueUnits), actor }),
    z.object({ reservationId: id, state: z.literal('settled'), overspent: z.boolean(), blockedScopes: z.array(BudgetScopeSchema) }),
  ),
  /** Frees the hold. Releasing a released or expired reservation changes nothing; a settled one is refused. */
  release: defineCommand(
    'budget.release',
    z.object({ workspaceId, reservationId: id, actor }),
    z.object({ reservationId: id, state: z.enum(['released', 'expired']), outcome: z.enum(['released', 'unchanged']) }),
  ),
  /** An operator lifts the block an overspend put on a scope. */
  review: defineCommand(
    'budget.review',
    z.object({ workspaceId, scope: BudgetScopeSchema, note: z.string().max(500).nullable().default(null), actor: ActorSchema }),
    z.object({ scope: BudgetScopeSchema, outcome: z.enum(['reviewed', 'unchanged']) }),
  ),
  /**
   * Raises the run's own USD limit by `amount` (micro-dollars) for an approved budget request,
   * once per attention: a repeat answers the first raise. The run's remaining room never grows
   * past what its deployment's and workspace's USD scopes have left, unless `actorRole` (the
   * approver's, as recorded with the approval) holds deployment-control; a missing role does not.
   */
  raiseRunLimit: defineCommand(
    'budget.limits.raise_run',
    z.object({ workspaceId, runId: id, amount: amount.min(1), attentionId: id, actor: ActorSchema, actorRole: RoleSchema.nullable().default(null) }),
    RunLimitRaiseSchema,
  ),
  /** Limit, spend and holds of the workspace's scopes, newest scopes first. */
  usage: defineCommand(
    'budget.usage',
    z.object({
      workspaceId,
      kind: BudgetScopeKindSchema.nullable().default(null),
      id: id.nullable().default(null),
      limit: z.number().int().min(1).max(1_000).default(200),
    }),
    z.object({ asOf: z.iso.datetime({ offset: true }), scopes: z.array(ScopeUsageSchema) }),
  ),
} as const;
