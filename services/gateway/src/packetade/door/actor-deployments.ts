import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { NotFoundError } from '../../identity/errors';
import type { ActorPrincipal } from '../actors/actor-principal';

/** What a deployment id looks like; anything else is answered as no such deployment before it reaches a query. */
const DEPLOYMENT_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * The deployments each actor made. An actor sees and controls only its own: another actor's,
 * one made in the console, and another workspace's all answer 404 alike.
 */
@Injectable()
export class ActorDeployments {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async assertOwned(principal: ActorPrincipal, deploymentId: string): Promise<void> {
    if (DEPLOYMENT_ID.test(deploymentId)) {
      const { rowCount } = await this.pool.query(
        `SELECT 1 FROM identity.packetade_deployments WHERE deployment_id = $1 AND workspace_id = $2 AND actor_name = $3`,
        [deploymentId, principal.workspaceId, principal.actorName],
      );
      if (rowCount === 1) return;
    }
    throw new NotFoundError('no such deployment');
  }

  /** Whether `id` could name a deployment or a run; anything else never reaches a query. */
  static isId(id: string): boolean {
    return DEPLOYMENT_ID.test(id);
  }

  async record(principal: ActorPrincipal, deploymentId: string, workerId: string, packageDigest: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO identity.packetade_deployments (deployment_id, workspace_id, actor_name, worker_id, package_digest)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (deployment_id) DO UPDATE SET package_digest = EXCLUDED.package_digest, updated_at = now()
         WHERE packetade_deployments.actor_name = EXCLUDED.actor_name AND packetade_deployments.workspace_id = EXCLUDED.workspace_id`,
      [deploymentId, principal.workspaceId, principal.actorName, workerId, packageDigest],
    );
  }

  /** The deployment ids of the actor, for the event feed. */
  async owned(workspaceId: string, actorName: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ deployment_id: string }>(
      `SELECT deployment_id FROM identity.packetade_deployments WHERE workspace_id = $1 AND actor_name = $2`,
      [workspaceId, actorName],
    );
    return rows.map((row) => row.deployment_id);
  }
}
