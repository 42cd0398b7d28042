import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { HOLD_REASONS } from './run-state';

const id = z.string().min(1).max(200);
const version = z.number().int().positive();
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const TriggerKindSchema = z.enum(['manual', 'cron', 'webhook', 'queue', 'alert']);
export type TriggerKind = z.infer<typeof TriggerKindSchema>;

/** A version's trigger as deployed: the id is stable for the deployment and the trigger's key. */
export const TriggerBindingSchema = z.object({
  triggerId: id,
  key: z.string().min(1),
  kind: TriggerKindSchema,
  cron: z.object({ expression: z.string(), timezone: z.string(), missed: z.enum(['skip', 'fire_once']) }).optional(),
  queue: z.object({ subject: z.string() }).optional(),
  alert: z
    .object({ names: z.array(z.string()), labels: z.record(z.string(), z.string()), on: z.array(z.enum(['firing', 'resolved'])) })
    .optional(),
});
export type TriggerBinding = z.infer<typeof TriggerBindingSchema>;

/** What a run is pinned to: one immutable version, as narrowed by its deployment. */
export const RunPinSchema = z.object({
  deploymentId: id,
  workerId: id,
  workerName: z.string(),
  version,
  digest: sha256,
  effectiveDigest: sha256,
});
export type RunPin = z.infer<typeof RunPinSchema>;

export const ActivationSourceSchema = z.enum(['manual', 'cron', 'webhook', 'queue', 'alert']);
export type ActivationSource = z.infer<typeof ActivationSourceSchema>;

/** A stored-by-reference activation payload (too large to travel inside an event). */
export const PayloadRefSchema = z.object({ payloadId: id, digest: sha256, bytes: z.number().int().nonnegative() });

export const ActivationSchema = z.object({
  activationId: id,
  source: ActivationSourceSchema,
  dedupeKey: z.string().min(1).max(400),
  triggerId: id.nullable(),
  receivedAt: z.iso.datetime(),
  input: z.json().nullable(),
  inputRef: PayloadRefSchema.nullable(),
  details: z.record(z.string(), z.json()),
});
export type Activation = z.infer<typeof ActivationSchema>;

export const WorkerCreatedV1 = z.object({ workerId: id, name: z.string(), description: z.string() });
export const WorkerVersionCreatedV1 = z.object({ workerId: id, version, digest: sha256, definition: z.json() });

/**
 * The effective (narrowed) limits a deployment runs under, for the services that enforce them
 * (budget, supervisor) without re-deriving them from the version and the overrides.
 */
export const EffectiveLimitsSchema = z.object({
  budgets: z.record(z.string(), z.json()),
  bounds: z.record(z.string(), z.number()),
  tools: z.array(z.json()),
});
export type EffectiveLimits = z.infer<typeof EffectiveLimitsSchema>;

export const DeploymentCreatedV1 = RunPinSchema.omit({ deploymentId: true }).extend({
  deploymentId: id,
  overrides: z.json(),
  maxConcurrentRuns: z.number().int().positive(),
  triggers: z.array(TriggerBindingSchema),
  /** Added after the first release of v1: absent in older events. */
  limits: EffectiveLimitsSchema.optional(),
});
export const DeploymentPausedV1 = z.object({ reason: z.string().nullable() });
export const DeploymentResumedV1 = z.object({ releasedRuns: z.number().int().nonnegative() });
export const DeploymentRevokedV1 = z.object({ reason: z.string() });
export const DeploymentRolledBackV1 = z.object({
  fromVersion: version,
  version,
  digest: sha256,
  effectiveDigest: sha256,
  maxConcurrentRuns: z.number().int().positive(),
  triggers: z.array(TriggerBindingSchema),
  limits: EffectiveLimitsSchema.optional(),
});
/** A deployment moved forward to a newer version of its worker (a package update); the same fields as a rollback. */
export const DeploymentUpdatedV1 = DeploymentRolledBackV1;

export const RunDeferredV1 = RunPinSchema.extend({ runId: id, activation: ActivationSchema, reason: z.enum(HOLD_REASONS) });
export const RunAdmittedV1 = RunPinSchema.extend({ runId: id, activation: ActivationSchema });
/**
 * Operator controls. Intake records them in the run's control stream (`runctl-<id>`); the
 * supervisor, the only writer of `run-<id>` once it claimed the run, folds each into the run's
 * stream with its position there (`controlVersion`) and who asked (`requestedBy`). See ADR 0017.
 */
const ControlFoldedFields = {
  controlVersion: z.number().int().positive().optional(),
  requestedBy: z.object({ kind: z.string(), id: z.string() }).optional(),
};
export const RunStopRequestedV1 = z.object({ reason: z.string().nullable(), ...ControlFoldedFields });
export const RunCancelledV1 = z.object({ reason: z.string() });
export const RunPauseRequestedV1 = z.object({ reason: z.string().nullable(), ...ControlFoldedFields });
export const RunResumeRequestedV1 = z.object({ ...ControlFoldedFields });
/** The run's deployment was revoked while the run was in a supervisor's hands: it ends revoked at its next step. */
export const RunRevokeRequestedV1 = z.object({ reason: z.string(), ...ControlFoldedFields });
/** A run that had not started when its deployment was revoked; it never will. */
export const RunRevokedV1 = z.object({ reason: z.string() });

export const IntakeEvents = {
  'worker.created': WorkerCreatedV1,
  'worker.version_created': WorkerVersionCreatedV1,
  'deployment.created': DeploymentCreatedV1,
  'deployment.paused': DeploymentPausedV1,
  'deployment.resumed': DeploymentResumedV1,
  'deployment.revoked': DeploymentRevokedV1,
  'deployment.rolled_back': DeploymentRolledBackV1,
  'deployment.updated': DeploymentUpdatedV1,
  'run.deferred': RunDeferredV1,
  'run.admitted': RunAdmittedV1,
  'run.stop_requested': RunStopRequestedV1,
  'run.cancelled': RunCancelledV1,
  'run.revoked': RunRevokedV1,
  'run.pause_requested': RunPauseRequestedV1,
  'run.resume_requested': RunResumeRequestedV1,
  'run.revoke_requested': RunRevokeRequestedV1,
} as const;

export type IntakeEventType = keyof typeof IntakeEvents;
export type IntakeEventData<T extends IntakeEventType> = z.infer<(typeof IntakeEvents)[T]>;

export function registerIntakeEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(IntakeEvents);
}
