import type { Pool } from 'pg';
import { ExecResultSchema, type ActorRef, type ExecRecord, type ExecResult, type ExecSummary, type ExecState } from '@packetagent/contracts';

interface ExecRow {
  workspace_id: string;
  exec_id: string;
  run_id: string | null;
  argv: string[];
  cwd: string;
  state: ExecState;
  driver: ExecSummary['driver'];
  exit_code: number | null;
  limit_name: ExecSummary['limit'];
  requested_by: ActorRef;
  replica: string;
  result: unknown;
  started_at: Date;
  ended_at: Date | null;
}

function summary(row: ExecRow): ExecSummary {
  return {
    execId: row.exec_id,
    workspaceId: row.workspace_id,
    runId: row.run_id,
    argv: row.argv,
    cwd: row.cwd,
    state: row.state,
    driver: row.driver,
    exitCode: row.exit_code,
    limit: row.limit_name,
    requestedBy: row.requested_by,
    startedAt: row.started_at.toISOString(),
    endedAt: row.ended_at?.toISOString() ?? null,
  };
}

export interface StartedExec {
  workspaceId: string;
  execId: string;
  runId: string | null;
  argv: readonly string[];
  cwd: string;
  driver: ExecSummary['driver'];
  requestedBy: ActorRef;
  replica: string;
  startedAt: Date;
}

/** sandbox.execs: the sandbox's own record of every command, written by the replica running it. */
export class ExecStore {
  constructor(private readonly pool: Pool) {}

  /** Records the start; false when the exec id is already taken in the workspace. */
  async start(exec: StartedExec): Promise<boolean> {
    const inserted = await this.pool.query(
      `INSERT INTO sandbox.execs (workspace_id, exec_id, run_id, argv, cwd, state, driver, requested_by, replica, started_at)
       VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
      [exec.workspaceId, exec.execId, exec.runId, JSON.stringify(exec.argv), exec.cwd, exec.driver, JSON.stringify(exec.requestedBy), exec.replica, exec.startedAt],
    );
    return inserted.rowCount === 1;
  }

  /** Records how a running exec ended; an exec already ended keeps its first ending. */
  async finish(result: ExecResult): Promise<void> {
    await this.pool.query(
      `UPDATE sandbox.execs SET state = $3, driver = $4, exit_code = $5, limit_name = $6, result = $7, ended_at = $8
       WHERE workspace_id = $1 AND exec_id = $2 AND state = 'running'`,
      [result.workspaceId, result.execId, result.state, result.driver, result.exitCode, result.limit, JSON.stringify(result), result.endedAt],
    );
  }

  async get(workspaceId: string, execId: string): Promise<(ExecRecord & { replica: string }) | null> {
    const { rows } = await this.pool.query<ExecRow>('SELECT * FROM sandbox.execs WHERE workspace_id = $1 AND exec_id = $2', [workspaceId, execId]);
    const row = rows[0];
    if (!row) return null;
    return { ...summary(row), result: row.result ? ExecResultSchema.parse(row.result) : null, replica: row.replica };
  }

  async list(workspaceId: string, options: { runId?: string; limit: number }): Promise<ExecSummary[]> {
    const { rows } = await this.pool.query<ExecRow>(
      `SELECT workspace_id, exec_id, run_id, argv, cwd, state, driver, exit_code, limit_name, requested_by, replica, NULL AS result, started_at, ended_at
       FROM sandbox.execs WHERE workspace_id = $1 AND ($2::text IS NULL OR run_id = $2) ORDER BY started_at DESC, exec_id LIMIT $3`,
      [workspaceId, options.runId ?? null, options.limit],
    );
    return rows.map(summary);
  }
}
