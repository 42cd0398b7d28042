import type { Pool } from 'pg';

export interface RunKey {
  workspaceId: string;
  runId: string;
}

/** The tables that say which replica holds what a run keeps in one process (its browser page, its MCP sessions). */
export type RunHolderTable = 'sandbox.browser_sessions' | 'sandbox.mcp_holders';

/** Which replica holds each run's `table` state: the first to claim it, until it releases it or is replaced. */
export class RunHolders {
  constructor(
    private readonly pool: Pool,
    private readonly table: RunHolderTable,
    private readonly replicaId: string,
  ) {}

  /** The run's holder: this replica when none was recorded. */
  async claim(key: RunKey): Promise<string> {
    const { rows } = await this.pool.query<{ replica: string }>(
      `INSERT INTO ${this.table} (workspace_id, run_id, replica) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, run_id) DO UPDATE SET replica = ${this.table}.replica
       RETURNING replica`,
      [key.workspaceId, key.runId, this.replicaId],
    );
    return rows[0]!.replica;
  }

  async holderOf(key: RunKey): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ replica: string }>(`SELECT replica FROM ${this.table} WHERE workspace_id = $1 AND run_id = $2`, [key.workspaceId, key.runId]);
    return rows[0]?.replica;
  }

  /** Makes this replica the holder in place of `from`; false when another replica did so first. */
  async takeOver(key: RunKey, from: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(`UPDATE ${this.table} SET replica = $4, opened_at = now() WHERE workspace_id = $1 AND run_id = $2 AND replica = $3`, [key.workspaceId, key.runId, from, this.replicaId]);
    return (rowCount ?? 0) > 0;
  }

  /** Forgets `replica` as the run's holder (this replica unless said). */
  async release(key: RunKey, replica = this.replicaId): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE workspace_id = $1 AND run_id = $2 AND replica = $3`, [key.workspaceId, key.runId, replica]);
  }

  async releaseAll(): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE replica = $1`, [this.replicaId]);
  }
}
