import { z } from 'zod';
import { defineCommand } from '../commands';
import { ACTOR_KINDS, Identifiers } from '../envelope';
import { RUN_STATES, HOLD_REASONS } from './run-state';
import { ActivationSourceSchema, TriggerBindingSchema } from './intake.events.v1';

/** Who asked: recorded as the actor of every event the command appends. */
export const ActorSchema = z.object({ kind: z.enum(ACTOR_KINDS), id: z.string().min(1).max(200) });
export type ActorRef = z.infer<typeof ActorSchema>;

const workspaceId = z.string().regex(Identifiers.workspace);
const entityId = z.string().min(1).max(200);
const scoped = z.object({ workspaceId, actor: ActorSchema });
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const timestamp = z.iso.datetime();

export const WorkerSummarySchema = z.object({
  id: entityId,
  name: z.string(),
  description: z.string(),
  latestVersion: z.number().int().nonnegative(),
  createdAt: timestamp,
});

export const VersionSchema = z.object({
  workerId: entityId,
  version: z.number().int().positive(),
  digest: sha256,
  definition: z.json(),
  /** The definition as written (YAML comments and key order kept); null for versions made before sources were kept. */
  source: z.object({ format: z.enum(['json', 'yaml']), text: z.string() }).nullable().default(null),
  createdAt: timestamp,
});

export const DeploymentStatusSchema = z.enum(['active', 'paused', 'revoked']);

export const DeploymentSchema = z.object({
  id: entityId,
  workerId: entityId,
  workerName: z.string(),
  version: z.number().int().positive(),
  digest: sha256,
  effectiveDigest: sha256,
  overrides: z.json(),
  status: DeploymentStatusSchema,
  statusReason: z.string().nullable(),
  maxConcurrentRuns: z.number().int().positive(),
  activeRuns: z.number().int().nonnegative(),
  heldRuns: z.number().int().nonnegative(),
  triggers: z.array(TriggerBindingSchema),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export type DeploymentView = z.infer<typeof DeploymentSchema>;

export const RunSchema = z.object({
  id: entityId,
  deploymentId: entityId,
  workerId: entityId,
  version: z.number().int().positive(),
  digest: sha256,
  state: z.enum(RUN_STATES),
  /** Why a queued run waits for admission; null once admitted. */
  hold: z.enum(HOLD_REASONS).nullable(),
  stopRequested: z.boolean(),
  pauseRequested: z.boolean(),
  source: ActivationSourceSchema,
  triggerId: z.string().nullable(),
  activationId: entityId,
  createdAt: timestamp,
  updatedAt: timestamp,
});
export type RunView = z.infer<typeof RunSchema>;

/** Webhook secrets are returned once: when the deployment (or a rollback) creates the trigger. */
const WithWebhookSecrets = DeploymentSchema.extend({
  webhooks: z.array(z.object({ triggerId: entityId, secret: z.string() })),
});
/** `created` is false when a request key answered a deployment made earlier (whose webhook secrets were shown then). */
const CreatedDeployment = WithWebhookSecrets.extend({ created: z.boolean() });

const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });
const pageRequest = { cursor: z.string().max(200).nullable().default(null), limit: z.number().int().min(1).max(200).default(50) };

/** Reply to every activation, whatever its source. `duplicate` is true when the dedupe key was seen before. */
export const ActivationResultSchema = z.object({
  runId: entityId,
  activationId: entityId,
  deploymentId: entityId,
  state: z.enum(RUN_STATES),
  hold: z.enum(HOLD_REASONS).nullable(),
  duplicate: z.boolean(),
});
export type ActivationResult = z.infer<typeof ActivationResultSchema>;

export const IntakeCommands = {
  createWorker: defineCommand(
    'intake.workers.create',
    scoped.extend({ name: z.string(), description: z.string().max(2000).default('') }),
    z.object({ id: entityId }),
  ),
  /** The worker of this name, created when the workspace has none: how a package deploy finds its worker. */
  ensureWorker: defineCommand(
    'intake.workers.ensure',
    scoped.extend({ name: z.string(), description: z.string().max(2000).default('') }),
    z.object({ id: entityId, created: z.boolean() }),
  ),
  listWorkers: defineCommand('intake.workers.list', z.object({ workspaceId, ...pageRequest }), page(WorkerSummarySchema)),
  getWorker: defineCommand('intake.workers.get', z.object({ workspaceId, workerId: entityId }), WorkerSummarySchema),
  /** The definition travels as text so YAML errors keep their line numbers. */
  createVersion: defineCommand(
    'intake.versions.create',
    scoped.extend({ workerId: entityId, source: z.string(), format: z.enum(['json', 'yaml']) }),
    z.object({ version: z.number().int().positive(), digest: sha256, created: z.boolean() }),
  ),
  /**
   * The worker named in the definition (created when the workspace has none) and the definition
   * as its next version, in one transaction: a definition refused creates neither.
   */
  applyDefinition: defineCommand(
    'intake.workers.apply',
    scoped.extend({
      source: z.string(),
      format: z.enum(['json', 'yaml']),
      /** Refuse with worker_name_taken when a worker of the definition's name exists, rather than add a version to it. */
      newWorker: z.boolean().default(false),
    }),
    z.object({ workerId: entityId, workerCreated: z.boolean(), version: z.number().int().positive(), digest: sha256, created: z.boolean() }),
  ),
  listVersions: defineCommand(
    'intake.versions.list',
    z.object({ workspaceId, workerId: entityId }),
    z.object({ items: z.array(VersionSchema.omit({ definition: true, source: true })) }),
  ),
  getVersion: defineCommand(
    'intake.versions.get',
    z.object({ workspaceId, workerId: entityId, version: z.number().int().positive() }),
    VersionSchema,
  ),
  createDeployment: defineCommand(
    'intake.deployments.create',
    scoped.extend({
      workerId: entityId,
      version: z.number().int().positive().nullable().default(null),
      overrides: z.json().default({}),
      /** Makes the creation idempotent: the same key in the workspace answers the same deployment (for the same worker and version), any other use of it is refused. */
      requestKey: z.string().min(1).max(300).nullable().default(null),
    }),
    CreatedDeployment,
  ),
  listDeployments: defineCommand(
    'intake.deployments.list',
    z.object({ workspaceId, workerId: entityId.nullable().default(null), ...pageRequest }),
    page(DeploymentSchema),
  ),
  getDeployment: defineCommand('intake.deployments.get', z.object({ workspaceId, deploymentId: entityId }), DeploymentSchema),
  controlDeployment: defineCommand(
    'intake.deployments.control',
    scoped.extend({
      deploymentId: entityId,
      /** `rollback` moves to any other version; `update` only to a newer one (and repeating it changes nothing). */
      action: z.enum(['pause', 'resume', 'revoke', 'rollback', 'update']),
      version: z.number().int().positive().nullable().default(null),
      reason: z.string().max(500).nullable().default(null),
    }),
    WithWebhookSecrets,
  ),
  /** Manual, cron and queue activations name their deployment (or trigger) directly. */
  activate: defineCommand(
    'intake.activate',
    scoped.extend({
      deploymentId: entityId.nullable().default(null),
      triggerId: entityId.nullable().default(null),
      source: ActivationSourceSchema,
      dedupeKey: z.string().min(1).max(400),
      input: z.json().nullable().default(null),
      details: z.record(z.string(), z.json()).default({}),
    }),
    ActivationResultSchema,
  ),
  /** Webhook ingress: the gateway forwards the raw body; intake holds the secret and verifies. */
  deliverWebhook: defineCommand(
    'intake.webhooks.deliver',
    z.object({
      triggerId: entityId,
      timestamp: z.string().max(20),
      signature: z.string().max(200),
      bodyBase64: z.string(),
      contentType: z.string().max(200).nullable(),
      receivedAt: timestamp,
    }),
    ActivationResultSchema,
  ),
  ingestAlerts: defineCommand(
    'intake.alerts.ingest',
    scoped.extend({ payload: z.json() }),
    z.object({
      received: z.number().int().nonnegative(),
      activations: z.array(ActivationResultSchema.extend({ fingerprint: z.string(), status: z.enum(['firing', 'resolved']) })),
    }),
  ),
  /** An activation input stored by reference (too large for the run's first event), for the supervisor. */
  getPayload: defineCommand(
    'intake.payloads.get',
    z.object({ workspaceId, payloadId: entityId }),
    z.object({ payloadId: entityId, digest: sha256, bytes: z.number().int().nonnegative(), content: z.json() }),
  ),
  getRun: defineCommand('intake.runs.get', z.object({ workspaceId, runId: entityId }), RunSchema),
  listRuns: defineCommand(
    'intake.runs.list',
    z.object({
      workspaceId,
      deploymentId: entityId.nullable().default(null),
      state: z.enum(RUN_STATES).nullable().default(null),
      ...pageRequest,
    }),
    page(RunSchema),
  ),
  stopRun: defineCommand(
    'intake.runs.stop',
    scoped.extend({ runId: entityId, reason: z.string().max(500).nullable().default(null) }),
    RunSchema,
  ),
  /** Pause and resume are recorded on the run for the supervisor, which honours them between steps. */
  pauseRun: defineCommand(
    'intake.runs.pause',
    scoped.extend({ runId: entityId, reason: z.string().max(500).nullable().default(null) }),
    RunSchema,
  ),
  resumeRun: defineCommand('intake.runs.resume', scoped.extend({ runId: entityId }), RunSchema),
} as const;
