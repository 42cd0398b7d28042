import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { BudgetScopeSchema } from '../budget/budget.events.v1';
import { RUN_STATES } from '../control-plane/run-state';
import { ModelRefSchema, RunBoundsSchema, WAIT_REASONS } from '../execution/run.events.v1';

const workspaceId = z.string().regex(Identifiers.workspace);
const id = z.string().min(1).max(200);
const count = z.number().int().nonnegative();
const instant = z.iso.datetime({ offset: true });

/** Codes of the errors the projector's commands answer with. */
export const ProjectorErrorCodes = {
  /** No such run in the workspace, or the projector has not seen it yet. */
  runNotFound: 'run_not_found',
} as const;

export const RUN_PHASES = ['plan', 'act', 'waiting', 'ended'] as const;
export const RunPhaseSchema = z.enum(RUN_PHASES);

export const OverviewHealthSchema = z.object({
  /** `degraded` when events wait for the relay or the projector, a message was dead-lettered, or an event could not be projected. */
  status: z.enum(['ok', 'degraded']),
  /** How long committed events have waited for the relay, in milliseconds (0 when none waits). */
  relayLagMs: count,
  /** Messages in the dead-letter stream (every consumer, every workspace). */
  deadLetters: count,
  /** Events of this workspace committed but not yet applied by the slowest projection. */
  projectionLagEvents: count,
  /** Events of this workspace the projector could not decode. */
  gaps: count,
});

export const OverviewSchema = z.object({
  asOf: instant,
  runs: z.object({ queued: count, running: count, waiting: count, succeededToday: count, failedToday: count }),
  attention: z.object({ open: count }),
  /** Settled USD spend since 00:00 UTC. */
  spendTodayUsd: z.number().nonnegative(),
  /** Limited budget scopes from the ledger; amounts in the scope's unit (micro-dollars for `usd`). */
  budgets: z.array(z.object({ scope: BudgetScopeSchema, limit: count, spent: count, held: count })),
  health: OverviewHealthSchema,
});
export type Overview = z.infer<typeof OverviewSchema>;

export const RunSummarySchema = z.object({
  runId: id,
  deploymentId: id,
  workerName: z.string(),
  version: z.number().int().positive(),
  state: z.enum(RUN_STATES),
  /** Null until the run starts. */
  phase: RunPhaseSchema.nullable(),
  iteration: count,
  toolCalls: count,
  costUsd: z.number().nonnegative(),
  bounds: RunBoundsSchema.nullable(),
  remaining: z
    .object({ iterations: z.number().int(), toolCalls: z.number().int(), costUsd: z.number().nullable(), wallSeconds: z.number() })
    .nullable(),
  waitingOn: z.object({ reason: z.enum(WAIT_REASONS), attentionId: z.string().nullable() }).nullable(),
  lastCheckpoint: z.object({ seq: z.number().int().positive(), digest: z.string(), at: instant }).nullable(),
  /** The terminal event's type (e.g. `run.failed`) with its reason and a bounded detail. */
  outcome: z.object({ type: z.string(), reason: z.string().nullable(), detail: z.string().nullable() }).nullable(),
  model: ModelRefSchema.nullable(),
  createdAt: instant,
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const ProjectorCommands = {
  /** Counts, spend, budgets and health of one workspace, from the projections. */
  overview: defineCommand('projector.overview', z.object({ workspaceId }), OverviewSchema),
  /** One run as the projections know it. */
  runSummary: defineCommand('projector.runs.summary', z.object({ workspaceId, runId: id }), RunSummarySchema),
} as const;
