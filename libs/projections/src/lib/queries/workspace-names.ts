import type { Pool, PoolClient } from 'pg';
import { PROJECTOR_SCHEMA } from '../applier';
import { qualified } from '../table';

export interface NamedWorker {
  id: string;
  name: string;
}

export interface NamedDeployment {
  id: string;
  workerId: string;
  workerName: string;
  version: number;
  state: string;
}

/** What a person reads in place of worker and deployment ids, for one workspace. */
export async function readWorkspaceNames(
  db: Pool | PoolClient,
  workspaceId: string,
  schema = PROJECTOR_SCHEMA,
): Promise<{ workers: NamedWorker[]; deployments: NamedDeployment[] }> {
  const [workers, deployments] = await Promise.all([
    db.query<{ worker_id: string; name: string }>(`SELECT worker_id, name FROM ${qualified(schema, 'workers')} WHERE workspace_id = $1 ORDER BY name, worker_id`, [
      workspaceId,
    ]),
    db.query<{ deployment_id: string; worker_id: string; worker_name: string; version: number; state: string }>(
      `SELECT deployment_id, worker_id, worker_name, version, state FROM ${qualified(schema, 'deployments')} WHERE workspace_id = $1 ORDER BY worker_name, created_at`,
      [workspaceId],
    ),
  ]);
  return {
    workers: workers.rows.map((row) => ({ id: row.worker_id, name: row.name })),
    deployments: deployments.rows.map((row) => ({ id: row.deployment_id, workerId: row.worker_id, workerName: row.worker_name, version: row.version, state: row.state })),
  };
}
