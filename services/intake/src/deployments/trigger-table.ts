import type { PoolClient } from 'pg';
import type { TriggerBinding } from '@packetagent/contracts';
import { newWebhookSecret } from '../shared/ids';

/**
 * Makes the deployment's trigger rows match `bindings`: new ones are added (a webhook gets a
 * fresh secret, returned once), kept ones keep their id and secret, dropped ones stop firing.
 */
export async function syncTriggers(
  client: PoolClient,
  deployment: { id: string; workspaceId: string },
  bindings: TriggerBinding[],
  active = true,
): Promise<{ triggerId: string; secret: string }[]> {
  const created: { triggerId: string; secret: string }[] = [];
  for (const binding of bindings) {
    const secret = binding.kind === 'webhook' ? newWebhookSecret() : null;
    const { rows } = await client.query<{ inserted: boolean }>(
      `INSERT INTO intake.triggers (trigger_id, deployment_id, workspace_id, key, kind, spec, webhook_secret, active)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)
       ON CONFLICT (trigger_id) DO UPDATE
         SET kind = EXCLUDED.kind, spec = EXCLUDED.spec, active = EXCLUDED.active,
             webhook_secret = COALESCE(intake.triggers.webhook_secret, EXCLUDED.webhook_secret)
       RETURNING (xmax = 0) AS inserted`,
      [binding.triggerId, deployment.id, deployment.workspaceId, binding.key, binding.kind, JSON.stringify(binding), secret, active],
    );
    if (secret && rows[0]?.inserted) created.push({ triggerId: binding.triggerId, secret });
  }
  await client.query(`UPDATE intake.triggers SET active = false WHERE deployment_id = $1 AND NOT (trigger_id = ANY($2::text[]))`, [
    deployment.id,
    bindings.map((binding) => binding.triggerId),
  ]);
  return created;
}

export async function deactivateTriggers(client: PoolClient, deploymentId: string): Promise<void> {
  await client.query('UPDATE intake.triggers SET active = false WHERE deployment_id = $1', [deploymentId]);
}
