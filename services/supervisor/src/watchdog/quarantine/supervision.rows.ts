import { runStreamId, type RunSupervision, type SupervisionStatus } from '@packetagent/contracts';
import type { Pool, PoolClient } from 'pg';
import { RunNotFoundError, RunNotQuarantinedError } from './quarantine.errors';

type Queryable = Pick<Pool | PoolClient, 'query'>;

export const runStream = runStreamId;

export interface SupervisionRow {
  run_id: string;
  workspace_id: string;
  status: Exclude<SupervisionStatus, 'unclaimed'>;
  quarantine_reason: string | null;
  waiting_on: string | null;
  claims: number;
  updated_at: Date;
}

export function supervisionView(row: SupervisionRow): RunSupervision {
  return {
    runId: row.run_id,
    status: row.status,
    quarantineReason: row.quarantine_reason,
    waitingOn: row.waiting_on,
    claims: row.claims,
    updatedAt: row.updated_at.toISOString(),
  };
}

async function streamInWorkspace(db: Queryable, runId: string, workspaceId: string): Promise<boolean> {
  const { rows } = await db.query<{ workspace_id: string }>('SELECT workspace_id FROM streams WHERE stream_id = $1', [runStream(runId)]);
  return rows[0]?.workspace_id === workspaceId;
}

/**
 * The run's lease row, or null for a run of the workspace that no replica has claimed yet.
 * Another workspace's run, or no run at all, is `run_not_found`.
 */
export async function readSupervision(db: Queryable, runId: string, workspaceId: string, options: { forUpdate?: boolean } = {}): Promise<SupervisionRow | null> {
  const { rows } = await db.query<SupervisionRow>(
    `SELECT run_id, workspace_id, status, quarantine_reason, waiting_on, claims, updated_at FROM supervisor.runs WHERE run_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [runId],
  );
  const row = rows[0];
  if (row) {
    if (row.workspace_id !== workspaceId) throw new RunNotFoundError(runId);
    return row;
  }
  if (await streamInWorkspace(db, runId, workspaceId)) return null;
  throw new RunNotFoundError(runId);
}

/**
 * Locks the lease row of a quarantined run for the caller's transaction: no replica can claim
 * the run until it commits (a claim waits on the lock, then finds the row changed).
 */
export async function lockQuarantined(client: PoolClient, runId: string, workspaceId: string): Promise<SupervisionRow> {
  const row = await readSupervision(client, runId, workspaceId, { forUpdate: true });
  if (!row) throw new RunNotQuarantinedError(runId, 'not yet claimed');
  if (row.status !== 'quarantined') throw new RunNotQuarantinedError(runId, row.status);
  return row;
}

export async function headVersion(db: Queryable, runId: string): Promise<number> {
  const { rows } = await db.query<{ version: string }>('SELECT coalesce(max(stream_version), 0) AS version FROM events WHERE stream_id = $1', [runStream(runId)]);
  return Number(rows[0]!.version);
}
