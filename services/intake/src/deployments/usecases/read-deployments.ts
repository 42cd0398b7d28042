import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { DeploymentView } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { decodeCursor, encodeCursor } from '../../shared/database';
import { NotFoundError } from '../../shared/errors';
import { deploymentView, type DeploymentRow } from '../deployment.rows';

@Injectable()
export class ReadDeploymentsUseCase {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async list(query: { workspaceId: string; workerId: string | null; cursor: string | null; limit: number }): Promise<{
    items: DeploymentView[];
    nextCursor: string | null;
  }> {
    const after = decodeCursor(query.cursor);
    const { rows } = await this.pool.query<DeploymentRow>(
      `SELECT * FROM intake.deployments
        WHERE workspace_id = $1 AND ($2::text IS NULL OR worker_id = $2) AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4`,
      [query.workspaceId, query.workerId, after, query.limit + 1],
    );
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    return { items: items.map(deploymentView), nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : null };
  }

  async get(workspaceId: string, deploymentId: string): Promise<DeploymentView> {
    const { rows } = await this.pool.query<DeploymentRow>('SELECT * FROM intake.deployments WHERE id = $1 AND workspace_id = $2', [
      deploymentId,
      workspaceId,
    ]);
    if (!rows[0]) throw new NotFoundError('deployment', deploymentId);
    return deploymentView(rows[0]);
  }
}
