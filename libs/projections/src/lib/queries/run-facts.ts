import type { Pool, PoolClient } from 'pg';
import { PROJECTOR_SCHEMA } from '../applier';
import { qualified } from '../table';

/** What the runs list shows beside intake's own fields: the worker's name, cost and how long the run took. */
export interface RunFacts {
  runId: string;
  workerId: string;
  workerName: string;
  deploymentId: string;
  version: number;
  costUsd: number;
  startedAt: string | null;
  endedAt: string | null;
  /** From the start (or creation, for a run that never started) to the end, or to now for an active run. */
  durationMs: number;
}

/** A page of the runs list is at most this many runs. */
export const MAX_RUN_FACTS = 200;

/** The facts of the named runs of one workspace; a run the projector has not seen yet is absent. */
export async function readRunFacts(db: Pool | PoolClient, workspaceId: string, runIds: readonly string[], schema = PROJECTOR_SCHEMA): Promise<RunFacts[]> {
  const ids = [...new Set(runIds)].slice(0, MAX_RUN_FACTS);
  if (ids.length === 0) return [];
  const { rows } = await db.query<{
    run_id: string;
    worker_id: string;
    worker_name: string;
    deployment_id: string;
    version: number;
    cost_usd: number;
    started_at: Date | null;
    ended_at: Date | null;
    duration_ms: string;
  }>(
    `SELECT run_id, worker_id, worker_name, deployment_id, version, cost_usd, started_at, ended_at,
            round(extract(epoch FROM coalesce(ended_at, now()) - coalesce(started_at, created_at)) * 1000) AS duration_ms
       FROM ${qualified(schema, 'runs')}
      WHERE workspace_id = $1 AND run_id = ANY($2::text[])`,
    [workspaceId, ids],
  );
  const byId = new Map(rows.map((row) => [row.run_id, row]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    return [
      {
        runId: row.run_id,
        workerId: row.worker_id,
        workerName: row.worker_name,
        deploymentId: row.deployment_id,
        version: row.version,
        costUsd: Number(row.cost_usd),
        startedAt: row.started_at?.toISOString() ?? null,
        endedAt: row.ended_at?.toISOString() ?? null,
        durationMs: Math.max(0, Number(row.duration_ms)),
      },
    ];
  });
}
