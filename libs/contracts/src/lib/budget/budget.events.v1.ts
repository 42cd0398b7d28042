import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { RoleSchema } from '../identity/roles';

const id = z.string().min(1).max(200);

/**
 * What a budget counts: `usd` in integer micro-dollars (1 USD = 1 000 000), or `count:<tool>`
 * in calls of that tool. Ledger amounts are integers: a float never enters the ledger.
 */
export const BudgetUnitSchema = z.string().regex(/^(usd|count:[a-z][a-z0-9_]{0,63}|count:mcp:[a-z][a-z0-9_-]{0,31}\/[A-Za-z0-9_.-]{1,128})$/, 'usd, count:<tool> or count:mcp:<server>/<tool>');
export type BudgetUnit = z.infer<typeof BudgetUnitSchema>;

export const MICRO_USD_PER_USD = 1_000_000;

export const BudgetScopeKindSchema = z.enum(['run', 'deployment', 'workspace']);
export type BudgetScopeKind = z.infer<typeof BudgetScopeKindSchema>;

/** `run`: the whole run; `hour`, `day`, `30d`: rolling windows ending now. */
export const BudgetWindowSchema = z.enum(['run', 'hour', 'day', '30d']);
export type BudgetWindow = z.infer<typeof BudgetWindowSchema>;

/** One limited ledger: the run, deployment or workspace `id`, counted in `unit` over `window`. */
export const BudgetScopeSchema = z.object({
  kind: BudgetScopeKindSchema,
  id,
  unit: BudgetUnitSchema,
  window: BudgetWindowSchema,
});
export type BudgetScope = z.infer<typeof BudgetScopeSchema>;

const amount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const BudgetAmountSchema = z.object({ unit: BudgetUnitSchema, amount });
export type BudgetAmount = z.infer<typeof BudgetAmountSchema>;

export const ScopeAmountSchema = BudgetScopeSchema.extend({ amount });
export type ScopeAmount = z.infer<typeof ScopeAmountSchema>;

export const BUDGET_STREAM_CATEGORY = 'budget';
export const BUDGET_SCOPE_STREAM_CATEGORY = 'budget_scope';

/** Each reservation is its own stream: reservations of one run never contend for a stream version. */
export function budgetReservationStream(reservationId: string): string {
  return `${BUDGET_STREAM_CATEGORY}-${reservationId}`;
}

/** Facts about a scope itself (warnings, reviews), keyed by the budget service's scope number. */
export function budgetScopeStream(scopeRef: number): string {
  return `${BUDGET_SCOPE_STREAM_CATEGORY}-${scopeRef}`;
}

/** The amounts were held in every listed scope (the scopes with a limit for the amount's unit). */
export const BudgetReservedV1 = z.object({
  reservationId: id,
  runId: id,
  deploymentId: id,
  idempotencyKey: z.string(),
  amounts: z.array(BudgetAmountSchema),
  scopes: z.array(ScopeAmountSchema),
  expiresAt: z.iso.datetime({ offset: true }),
});

/** Each scope's hold became spend: `spent - held` is the settlement's change to the scope's total. */
export const BudgetSettledV1 = z.object({
  reservationId: id,
  runId: id,
  actual: z.array(BudgetAmountSchema),
  scopes: z.array(BudgetScopeSchema.extend({ held: amount, spent: amount })),
});

/** The holds were freed: on request (released) or because the reservation outlived its TTL (expired). */
export const BudgetReleasedV1 = z.object({ reservationId: id, runId: id, scopes: z.array(ScopeAmountSchema) });
export const BudgetExpiredV1 = BudgetReleasedV1.extend({ expiresAt: z.iso.datetime({ offset: true }) });

/** A settlement spent more than it held; the scopes of that unit take no reservation until reviewed. */
export const BudgetOverspentV1 = z.object({
  reservationId: id,
  runId: id,
  unit: BudgetUnitSchema,
  reserved: amount,
  actual: amount,
  blockedScopes: z.array(BudgetScopeSchema),
});

/** spent + held reached `thresholdPercent` of the limit; announced once per scope and window. */
export const BudgetWarningV1 = z.object({
  scope: BudgetScopeSchema,
  limit: amount,
  spent: amount,
  held: amount,
  thresholdPercent: z.number().int().min(1).max(100),
  reservationId: id.nullable(),
});

/** An operator reviewed a blocked scope; it takes reservations again. */
export const BudgetReviewedV1 = z.object({ scope: BudgetScopeSchema, note: z.string().max(500).nullable() });

/**
 * The run's own limit was raised after a person approved its budget request (attention
 * `attentionId`), once per attention: by `raised` of the `requested` (micro-dollars), capped by
 * the deployment's and workspace's remaining budget (`cappedBy`) unless the approver's role holds
 * deployment-control. Appended to the run scope's stream.
 */
export const BudgetRunLimitRaisedV1 = z.object({
  scope: BudgetScopeSchema,
  runId: id,
  attentionId: id,
  requested: amount,
  raised: amount,
  limitBefore: amount,
  limitAfter: amount,
  cappedBy: BudgetScopeSchema.nullable(),
  /** The approver's role as recorded with the approval; null when none was. */
  actorRole: RoleSchema.nullable(),
});

export const BudgetEvents = {
  'budget.reserved': BudgetReservedV1,
  'budget.settled': BudgetSettledV1,
  'budget.released': BudgetReleasedV1,
  'budget.expired': BudgetExpiredV1,
  'budget.overspent': BudgetOverspentV1,
  'budget.warning': BudgetWarningV1,
  'budget.reviewed': BudgetReviewedV1,
  'budget.run_limit_raised': BudgetRunLimitRaisedV1,
} as const;

export type BudgetEventType = keyof typeof BudgetEvents;
export type BudgetEventData<T extends BudgetEventType> = z.infer<(typeof BudgetEvents)[T]>;

export function registerBudgetEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(BudgetEvents);
}
