import type { Pool, PoolClient } from 'pg';
import { Identifiers, runStreamId } from '@packetagent/contracts';
import { NotFoundError } from '../identity/errors';

/**
 * Fails with not_found unless the run's stream exists in the workspace: a run of another
 * workspace, or an id that could not name a run, answers exactly like a run that never was.
 */
export async function assertRunInWorkspace(db: Pool | PoolClient, workspaceId: string, runId: string): Promise<string> {
  const stream = runStreamId(runId);
  if (Identifiers.stream.test(stream)) {
    const { rows } = await db.query<{ workspace_id: string }>(`SELECT workspace_id FROM streams WHERE stream_id = $1`, [stream]);
    if (rows[0]?.workspace_id === workspaceId) return stream;
  }
  throw new NotFoundError('no such run');
}
