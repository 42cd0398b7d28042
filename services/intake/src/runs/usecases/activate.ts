import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { ValidationError, type ActivationResult } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { NotFoundError } from '../../shared/errors';
import type { DeploymentRow } from '../../deployments/deployment.rows';
import { RunAdmission, type ActivationRequest } from '../run-admission';

export interface Activate extends ActivationRequest {
  workspaceId: string;
  deploymentId: string | null;
}

/** One activation, from any source, addressed by deployment or by trigger. */
@Injectable()
export class ActivateUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async execute(command: Activate): Promise<ActivationResult> {
    if (!command.deploymentId && !command.triggerId) {
      throw new ValidationError('invalid activation', [{ path: 'deploymentId', message: 'name a deployment or a trigger' }]);
    }
    return this.store.transaction(async (client) => {
      const deployment = await lockTarget(client, command);
      return this.admission.admit(client, deployment, command);
    });
  }
}

/** The deployment an activation addresses, locked; a trigger must still be bound to it. */
export async function lockTarget(
  client: PoolClient,
  target: { workspaceId: string; deploymentId: string | null; triggerId: string | null },
): Promise<DeploymentRow> {
  const { rows } = await client.query<DeploymentRow>(
    target.triggerId
      ? `SELECT d.* FROM intake.deployments d JOIN intake.triggers t ON t.deployment_id = d.id
          WHERE t.trigger_id = $1 AND t.active AND d.workspace_id = $2 AND ($3::text IS NULL OR d.id = $3)
          FOR UPDATE OF d`
      : `SELECT * FROM intake.deployments WHERE id = $3 AND workspace_id = $2 AND $1::text IS NULL FOR UPDATE`,
    [target.triggerId, target.workspaceId, target.deploymentId],
  );
  const deployment = rows[0];
  if (!deployment) throw new NotFoundError(target.triggerId ? 'trigger' : 'deployment', (target.triggerId ?? target.deploymentId)!);
  return deployment;
}
