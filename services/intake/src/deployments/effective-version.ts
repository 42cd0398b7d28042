import type { PoolClient } from 'pg';
import {
  canonicalDefinition,
  DeploymentOverridesSchema,
  narrowDefinition,
  triggerKey,
  triggerKind,
  validateStoredDefinition,
  type EffectiveLimits,
  type TriggerBinding,
  type WorkerDefinition,
} from '@packetagent/contracts';
import { NotFoundError } from '../shared/errors';
import { triggerIdFor } from '../shared/ids';

export interface EffectiveVersion {
  version: number;
  digest: string;
  effective: WorkerDefinition;
  effectiveDigest: string;
  overrides: unknown;
}

/** Loads a stored version and applies a deployment's overrides, which may only narrow it. */
export async function effectiveVersion(
  client: PoolClient,
  target: { workspaceId: string; workerId: string; version: number | null },
  overridesInput: unknown,
): Promise<EffectiveVersion> {
  const { rows } = await client.query<{ version: number; digest: string; definition: unknown }>(
    `SELECT v.version, v.digest, v.definition FROM intake.versions v
      WHERE v.worker_id = $1 AND v.workspace_id = $2
        AND v.version = COALESCE($3::int, (SELECT latest_version FROM intake.workers WHERE id = $1))`,
    [target.workerId, target.workspaceId, target.version],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError(target.version ? `version ${target.version} of worker` : 'a version of worker', target.workerId);
  // Stored versions were validated when created; validating again fails loudly if a stored
  // document ever stops matching the schema, rather than deploying something unchecked.
  const definition = validateStoredDefinition(row.definition);
  const effective = narrowDefinition(definition, overridesInput ?? {});
  const overrides = DeploymentOverridesSchema.parse(overridesInput ?? {});
  return {
    version: row.version,
    digest: row.digest.trim(),
    effective,
    effectiveDigest: canonicalDefinition(effective).digest,
    overrides,
  };
}

/** The effective version's triggers as this deployment binds them (manual runs need no binding). */
export function triggerBindings(deploymentId: string, definition: WorkerDefinition): TriggerBinding[] {
  const bindings: TriggerBinding[] = [];
  definition.triggers.forEach((trigger, index) => {
    const kind = triggerKind(trigger);
    if (kind === 'manual') return;
    const key = triggerKey(trigger, index);
    const binding: TriggerBinding = { triggerId: triggerIdFor(deploymentId, key), key, kind };
    if ('cron' in trigger) binding.cron = { expression: trigger.cron, timezone: trigger.timezone, missed: trigger.missed };
    if ('queue' in trigger) binding.queue = { subject: trigger.queue.subject };
    if ('alert' in trigger) {
      binding.alert = { names: trigger.alert.names ?? [], labels: trigger.alert.labels ?? {}, on: trigger.alert.on };
    }
    bindings.push(binding);
  });
  return bindings;
}

/** What enforcing services need of the effective definition: budgets, bounds and tool grants. */
export function effectiveLimits(definition: WorkerDefinition): EffectiveLimits {
  return JSON.parse(JSON.stringify({ budgets: definition.budgets, bounds: definition.bounds, tools: definition.tools })) as EffectiveLimits;
}
