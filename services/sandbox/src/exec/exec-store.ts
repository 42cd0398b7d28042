import type { Pool, PoolClient } from 'pg';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { ExecResultSchema, operatorExecStream, type ActorRef, type SandboxEventData, type ExecRecord, type ExecResult, type ExecSummary, type ExecState } from '@packetagent/contracts';

interface ExecRow {
  workspace_id: string;
  exec_id: string;
  run_id: string | null;
  argv: string[];
  cwd: string;
  state: ExecState;
  driver: ExecSummary['driver'];
  computer: string | null;
  remote_pgid: number | null;
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
    computer: row.computer,
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
  computer: string | null;
  requestedBy: ActorRef;
  replica: string;
  startedAt: Date;
}

/**
 * sandbox.execs: the sandbox's own record of every command, written by the replica running it.
 * An operator's command is also recorded as events in its own stream, in the same transaction
 * as the row: if its record cannot be written, it does not run.
 */
export class ExecStore {
  constructor(
    private readonly pool: Pool,
    private readonly events: PostgresEventStore,
  ) {}

  /** Records the start (with its event when `audit` is given); false when the exec id is already taken in the workspace. */
  async start(exec: StartedExec, audit: SandboxEventData<'sandbox.exec_started'> | null): Promise<boolean> {
    if (!audit) return this.insert(this.pool, exec);
    return this.events.transaction(async (client) => {
      if (!(await this.insert(client, exec))) return false;
      await this.events.append(operatorExecStream(exec.workspaceId, exec.execId), 'no_stream', [{ type: 'sandbox.exec_started', data: audit, actor: exec.requestedBy }], { workspaceId: exec.workspaceId, client });
      return true;
    });
  }

  private async insert(executor: Pool | PoolClient, exec: StartedExec): Promise<boolean> {
    const inserted = await executor.query(
      `INSERT INTO sandbox.execs (workspace_id, exec_id, run_id, argv, cwd, state, driver, computer, requested_by, replica, started_at)
       VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
      [exec.workspaceId, exec.execId, exec.runId, JSON.stringify(exec.argv), exec.cwd, exec.driver, exec.computer, JSON.stringify(exec.requestedBy), exec.replica, exec.startedAt],
    );
    return inserted.rowCount === 1;
  }

  /** Records how a running exec ended (with its event for an operator's); an exec already ended keeps its first ending. */
  async finish(result: ExecResult, audit: { actor: ActorRef } | null = null): Promise<void> {
    if (!audit) return void (await this.update(this.pool, result));
    await this.events.transaction(async (client) => {
      if (!(await this.update(client, result))) return;
      const data: SandboxEventData<'sandbox.exec_ended'> = {
        execId: result.execId,
        state: result.state,
        exitCode: result.exitCode,
        signal: result.signal,
        limit: result.limit,
        durationMs: result.durationMs,
        stdout: { bytes: result.stdout.bytes, digest: result.stdout.digest },
        stderr: { bytes: result.stderr.bytes, digest: result.stderr.digest },
      };
      await this.events.append(operatorExecStream(result.workspaceId, result.execId), 'any', [{ type: 'sandbox.exec_ended', data, actor: audit.actor }], { workspaceId: result.workspaceId, client });
    });
  }

  private async update(executor: Pool | PoolClient, result: ExecResult): Promise<boolean> {
    const updated = await executor.query(
      `UPDATE sandbox.execs SET state = $3, driver = $4, exit_code = $5, limit_name = $6, result = $7, ended_at = $8
       WHERE workspace_id = $1 AND exec_id = $2 AND state = 'running'`,
      [result.workspaceId, result.execId, result.state, result.driver, result.exitCode, result.limit, JSON.stringify(result), result.endedAt],
    );
    return updated.rowCount === 1;
  }

  async get(workspaceId: string, execId: string): Promise<(ExecRecord & { replica: string; remotePgid: number | null }) | null> {
    const { rows } = await this.pool.query<ExecRow>('SELECT * FROM sandbox.execs WHERE workspace_id = $1 AND exec_id = $2', [workspaceId, execId]);
    const row = rows[0];
    if (!row) return null;
    return { ...summary(row), result: row.result ? ExecResultSchema.parse(row.result) : null, replica: row.replica, remotePgid: row.remote_pgid };
  }

  /** The process group a command on a computer runs as, so another replica can kill it if this one dies. */
  async remoteStarted(workspaceId: string, execId: string, pgid: number): Promise<void> {
    await this.pool.query(`UPDATE sandbox.execs SET remote_pgid = $3 WHERE workspace_id = $1 AND exec_id = $2 AND state = 'running'`, [workspaceId, execId, pgid]);
  }

  async list(workspaceId: string, options: { runId?: string; limit: number }): Promise<ExecSummary[]> {
    const { rows } = await this.pool.query<ExecRow>(
      `SELECT workspace_id, exec_id, run_id, argv, cwd, state, driver, computer, NULL AS remote_pgid, exit_code, limit_name, requested_by, replica, NULL AS result, started_at, ended_at
       FROM sandbox.execs WHERE workspace_id = $1 AND ($2::text IS NULL OR run_id = $2) ORDER BY started_at DESC, exec_id LIMIT $3`,
      [workspaceId, options.runId ?? null, options.limit],
    );
    return rows.map(summary);
  }
}
