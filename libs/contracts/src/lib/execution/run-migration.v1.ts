import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { ActorSchema } from '../control-plane/intake.commands.v1';

/**
 * Moving a waiting run to its deployment's current version. The supervisor replays the run's
 * recorded history through the run decider under both versions; the run moves only if every
 * decision comes out the same, and the move is an event on the run. See ADR 0017.
 */

const workspaceId = z.string().regex(Identifiers.workspace);
const id = z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const RunPinRefSchema = z.object({ version: z.number().int().positive(), digest: sha256, effectiveDigest: sha256 });

/** Where the shadow replay first decided differently: the event the run recorded there, and both decisions. */
export const MigrationDivergenceSchema = z.object({
  /** Stream version of the recorded event whose decision differs. */
  streamVersion: z.number().int().positive(),
  globalPosition: z.number().int().positive().nullable(),
  eventType: z.string(),
  recorded: z.string(),
  proposed: z.string(),
});
export type MigrationDivergence = z.infer<typeof MigrationDivergenceSchema>;

export const MIGRATION_OUTCOMES = ['migrated', 'would_migrate', 'refused'] as const;

export const RunMigrationResultSchema = z.object({
  runId: id,
  outcome: z.enum(MIGRATION_OUTCOMES),
  from: RunPinRefSchema,
  to: RunPinRefSchema,
  /** Decisions replayed and found the same. */
  decisionsCompared: z.number().int().nonnegative(),
  divergence: MigrationDivergenceSchema.nullable(),
  /** Why a run that was not compared is refused (not waiting, already on the version, being driven). */
  refusal: z.string().nullable(),
});
export type RunMigrationResult = z.infer<typeof RunMigrationResultSchema>;

export const MigrationErrorCodes = {
  runNotFound: 'run_not_found',
  /** Only a waiting run moves: a running one is mid-step, a finished one is history. */
  runNotWaiting: 'run_not_waiting',
  /** The target must be the version the run's deployment pins now (roll the deployment first). */
  versionNotDeployed: 'version_not_deployed',
  /** A replica is driving the run at this moment. */
  runBusy: 'run_busy',
} as const;

export const MigrationCommands = {
  /** One run; `dryRun` compares without moving it. */
  migrateRun: defineCommand(
    'supervisor.run.migrate',
    z.object({ workspaceId, runId: id, version: z.number().int().positive(), dryRun: z.boolean().default(false), actor: ActorSchema }),
    RunMigrationResultSchema,
  ),
  /** Every waiting run of a deployment, each compared on its own; with `dryRun`, none moves. */
  migrateDeploymentRuns: defineCommand(
    'supervisor.deployment.migrate_runs',
    z.object({ workspaceId, deploymentId: id, version: z.number().int().positive(), dryRun: z.boolean().default(true), actor: ActorSchema }),
    z.object({ deploymentId: id, results: z.array(RunMigrationResultSchema) }),
  ),
} as const;

/** Appended by the supervisor when a waiting run moves to another version of its worker. */
export const RunMigratedV1 = z.object({
  from: RunPinRefSchema,
  to: RunPinRefSchema,
  decisionsCompared: z.number().int().nonnegative(),
  by: ActorSchema,
});
