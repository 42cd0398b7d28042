import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { SUPERVISOR_OPTIONS, type SupervisorOptions } from '../supervisor.options';

export type ClaimOutcome =
  | { kind: 'claimed'; claim: number }
  /** Another replica holds a live lease on it. */
  | { kind: 'held'; holder: string; leaseUntil: Date }
  | { kind: 'finished'; status: 'terminal' | 'quarantined' };

export type ReleaseStatus = 'active' | 'waiting' | 'terminal' | 'quarantined';

/**
 * Leases on runs in `supervisor.runs`. A lease keeps two replicas from driving one run at once
 * and lets a lapsed run be found; what a holder writes is fenced by the run's stream version.
 */
@Injectable()
export class RunClaims {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
  ) {}

  async claim(runId: string, workspaceId: string, holder: string): Promise<ClaimOutcome> {
    const { rows } = await this.pool.query<{ claims: number }>(
      `INSERT INTO supervisor.runs (run_id, workspace_id, status, holder, lease_until, claims)
       VALUES ($1, $2, 'active', $3, now() + make_interval(secs => $4 / 1000.0), 1)
       ON CONFLICT (run_id) DO UPDATE
         SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until, claims = supervisor.runs.claims + 1,
             status = 'active', waiting_on = NULL, updated_at = now()
         WHERE supervisor.runs.workspace_id = EXCLUDED.workspace_id
           AND supervisor.runs.status IN ('active', 'waiting')
           AND (supervisor.runs.holder IS NULL OR supervisor.runs.lease_until < now())
       RETURNING claims`,
      [runId, workspaceId, holder, this.options.leaseMs],
    );
    if (rows[0]) return { kind: 'claimed', claim: rows[0].claims };
    const current = await this.pool.query<{ status: string; holder: string | null; lease_until: Date | null }>(
      'SELECT status, holder, lease_until FROM supervisor.runs WHERE run_id = $1',
      [runId],
    );
    const row = current.rows[0];
    if (row && (row.status === 'terminal' || row.status === 'quarantined')) return { kind: 'finished', status: row.status };
    return { kind: 'held', holder: row?.holder ?? 'unknown', leaseUntil: row?.lease_until ?? new Date() };
  }

  /** Extends the leases `holder` still has among `runIds`; answers the ids it no longer holds. */
  async renew(holder: string, runIds: string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    const { rows } = await this.pool.query<{ run_id: string }>(
      `UPDATE supervisor.runs SET lease_until = now() + make_interval(secs => $3 / 1000.0), updated_at = now()
        WHERE run_id = ANY($2::text[]) AND holder = $1 AND status = 'active'
        RETURNING run_id`,
      [holder, runIds, this.options.leaseMs],
    );
    const kept = new Set(rows.map((row) => row.run_id));
    return runIds.filter((id) => !kept.has(id));
  }

  async release(runId: string, holder: string, status: ReleaseStatus, details: { waitingOn?: string | null; quarantineReason?: string | null } = {}): Promise<void> {
    await this.pool.query(
      `UPDATE supervisor.runs
          SET holder = NULL, lease_until = NULL, status = $3, waiting_on = $4, quarantine_reason = $5, updated_at = now()
        WHERE run_id = $1 AND holder = $2`,
      [runId, holder, status, details.waitingOn ?? null, details.quarantineReason ?? null],
    );
  }

  /** Runs someone should be driving whose holder's lease has lapsed (or that were never held). */
  async lapsed(limit: number): Promise<Array<{ runId: string; workspaceId: string }>> {
    const { rows } = await this.pool.query<{ run_id: string; workspace_id: string }>(
      `SELECT run_id, workspace_id FROM supervisor.runs
        WHERE status = 'active' AND (lease_until IS NULL OR lease_until < now())
        ORDER BY updated_at LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({ runId: row.run_id, workspaceId: row.workspace_id }));
  }

  /** The replica with a live lease on the run, if any. */
  async holder(runId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ holder: string | null }>('SELECT holder FROM supervisor.runs WHERE run_id = $1 AND lease_until > now()', [runId]);
    return rows[0]?.holder ?? null;
  }

  async waitingOn(attentionId: string): Promise<{ runId: string; workspaceId: string } | null> {
    const { rows } = await this.pool.query<{ run_id: string; workspace_id: string }>(
      `SELECT run_id, workspace_id FROM supervisor.runs WHERE waiting_on = $1 LIMIT 1`,
      [attentionId],
    );
    return rows[0] ? { runId: rows[0].run_id, workspaceId: rows[0].workspace_id } : null;
  }
}
