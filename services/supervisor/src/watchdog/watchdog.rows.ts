import { RUN_TERMINAL_EVENT_TYPES } from '@packetagent/contracts';
import type { Pool } from 'pg';
import { findingKey, type Finding, type FindingCause } from './watchdog.plan';

const WATCHDOG = 'default';
const RUN_STREAM = /^run-(.+)$/;

export interface AdmissionCandidate {
  runId: string;
  workspaceId: string;
  position: number;
  admittedAt: Date;
}

export interface WaitingRow {
  runId: string;
  workspaceId: string;
  attentionId: string;
}

/**
 * The watchdog's reads and writes: the run streams of the event store (admissions and how runs
 * ended), the lease table `supervisor.runs`, and its own cursor and findings. Every read is
 * served by an index and bounded by a limit (docs/adr/0020-stuck-run-watchdog.md has the plans
 * and what they cost on 10 000 runs).
 */
export class WatchdogRows {
  constructor(private readonly pool: Pool) {}

  async now(): Promise<Date> {
    const { rows } = await this.pool.query<{ now: Date }>('SELECT now() AS now');
    return rows[0]!.now;
  }

  /**
   * Admitted runs without a lease row that have not ended, after the cursor and up to the
   * relay's cursor (an event above it may still be joined by one that commits below it, and
   * its wake has not even been published). The cursor then moves up to the first such run, or
   * to the relay's cursor when there is none: what lies below it is claimed or ended for good.
   */
  async unclaimedAdmissions(relayName: string, limit: number): Promise<AdmissionCandidate[]> {
    const bounds = await this.pool.query<{ after: string; upto: string }>(
      `SELECT coalesce((SELECT admitted_after FROM supervisor.watchdog WHERE name = $1), 0) AS after,
              coalesce((SELECT position FROM relay_cursors WHERE name = $2), 0) AS upto`,
      [WATCHDOG, relayName],
    );
    const after = Number(bounds.rows[0]!.after);
    const upto = Number(bounds.rows[0]!.upto);
    if (upto <= after) return [];
    const { rows } = await this.pool.query<{ global_position: string; stream_id: string; workspace_id: string; occurred_at: Date }>(
      `SELECT a.global_position, a.stream_id, a.workspace_id, a.occurred_at
         FROM events a
        WHERE a.type = 'run.admitted' AND a.global_position > $1 AND a.global_position <= $2
          AND NOT EXISTS (SELECT 1 FROM supervisor.runs r WHERE r.run_id = substr(a.stream_id, 5))
          AND NOT EXISTS (SELECT 1 FROM events t
                           WHERE t.stream_id = a.stream_id AND t.stream_version > a.stream_version AND t.type = ANY($3::text[]))
        ORDER BY a.global_position
        LIMIT $4`,
      [after, upto, RUN_TERMINAL_EVENT_TYPES, limit],
    );
    const candidates = rows.flatMap((row) => {
      const runId = RUN_STREAM.exec(row.stream_id)?.[1];
      return runId ? [{ runId, workspaceId: row.workspace_id, position: Number(row.global_position), admittedAt: row.occurred_at }] : [];
    });
    const cursor = candidates.length > 0 ? candidates[0]!.position - 1 : upto;
    await this.pool.query(
      `INSERT INTO supervisor.watchdog (name, admitted_after) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET admitted_after = GREATEST(supervisor.watchdog.admitted_after, EXCLUDED.admitted_after)`,
      [WATCHDOG, cursor],
    );
    return candidates;
  }

  /** Runs someone should be driving whose lease lapsed more than `graceMs` ago (or that were never leased). */
  async lapsedLeases(graceMs: number, limit: number): Promise<Array<{ runId: string; workspaceId: string; lapsedAt: Date; holder: string | null }>> {
    const { rows } = await this.pool.query<{ run_id: string; workspace_id: string; lapsed_at: Date; holder: string | null }>(
      `SELECT run_id, workspace_id, coalesce(lease_until, updated_at) AS lapsed_at, holder
         FROM supervisor.runs
        WHERE status = 'active'
          AND (lease_until < now() - make_interval(secs => $1 / 1000.0)
               OR (lease_until IS NULL AND updated_at < now() - make_interval(secs => $1 / 1000.0)))
        ORDER BY lease_until NULLS FIRST
        LIMIT $2`,
      [graceMs, limit],
    );
    return rows.map((row) => ({ runId: row.run_id, workspaceId: row.workspace_id, lapsedAt: row.lapsed_at, holder: row.holder }));
  }

  /** Parked runs waiting on an attention record (a paused run waits on a person's resume and is not listed). */
  async waitingOnAttention(limit: number): Promise<WaitingRow[]> {
    const { rows } = await this.pool.query<{ run_id: string; workspace_id: string; waiting_on: string }>(
      `SELECT run_id, workspace_id, waiting_on FROM supervisor.runs
        WHERE waiting_on IS NOT NULL AND status = 'waiting'
        ORDER BY waiting_on
        LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({ runId: row.run_id, workspaceId: row.workspace_id, attentionId: row.waiting_on }));
  }

  async quarantined(limit: number): Promise<Array<{ runId: string; workspaceId: string; reason: string }>> {
    const { rows } = await this.pool.query<{ run_id: string; workspace_id: string; quarantine_reason: string | null }>(
      `SELECT run_id, workspace_id, quarantine_reason FROM supervisor.runs WHERE status = 'quarantined' ORDER BY updated_at LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({ runId: row.run_id, workspaceId: row.workspace_id, reason: row.quarantine_reason ?? 'its events cannot be replayed' }));
  }

  async findings(): Promise<Map<string, Finding>> {
    const { rows } = await this.pool.query<{
      run_id: string;
      workspace_id: string;
      cause: FindingCause;
      detail: string;
      first_seen_at: Date;
      wakes: number;
      failed_wakes: number;
      attention_id: string | null;
    }>('SELECT run_id, workspace_id, cause, detail, first_seen_at, wakes, failed_wakes, attention_id FROM supervisor.watchdog_findings');
    return new Map(
      rows.map((row) => [
        findingKey(row.run_id, row.cause),
        {
          runId: row.run_id,
          workspaceId: row.workspace_id,
          cause: row.cause,
          detail: row.detail,
          firstSeenAt: row.first_seen_at,
          wakes: row.wakes,
          failedWakes: row.failed_wakes,
          attentionId: row.attention_id,
        },
      ]),
    );
  }

  /** Replaces the findings with this sweep's, in one transaction, and records the sweep. */
  async saveSweep(findings: readonly Finding[], sweepMs: number): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `DELETE FROM supervisor.watchdog_findings f
          WHERE NOT EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) AS k(run_id, cause) WHERE k.run_id = f.run_id AND k.cause = f.cause)`,
        [findings.map((finding) => finding.runId), findings.map((finding) => finding.cause)],
      );
      if (findings.length > 0) {
        await client.query(
          `INSERT INTO supervisor.watchdog_findings (run_id, cause, workspace_id, detail, first_seen_at, last_seen_at, wakes, failed_wakes, attention_id)
           SELECT f.run_id, f.cause, f.workspace_id, f.detail, f.first_seen_at, now(), f.wakes, f.failed_wakes, f.attention_id
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::int[], $7::int[], $8::text[])
                  AS f(run_id, cause, workspace_id, detail, first_seen_at, wakes, failed_wakes, attention_id)
           ON CONFLICT (run_id, cause) DO UPDATE
             SET detail = EXCLUDED.detail, last_seen_at = EXCLUDED.last_seen_at, wakes = EXCLUDED.wakes,
                 failed_wakes = EXCLUDED.failed_wakes, attention_id = coalesce(EXCLUDED.attention_id, supervisor.watchdog_findings.attention_id)`,
          [
            findings.map((finding) => finding.runId),
            findings.map((finding) => finding.cause),
            findings.map((finding) => finding.workspaceId),
            findings.map((finding) => finding.detail),
            findings.map((finding) => finding.firstSeenAt),
            findings.map((finding) => finding.wakes),
            findings.map((finding) => finding.failedWakes),
            findings.map((finding) => finding.attentionId),
          ],
        );
      }
      await client.query(
        `INSERT INTO supervisor.watchdog (name, swept_at, sweep_ms) VALUES ($1, now(), $2)
         ON CONFLICT (name) DO UPDATE SET swept_at = now(), sweep_ms = EXCLUDED.sweep_ms`,
        [WATCHDOG, Math.round(sweepMs)],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Findings per cause, as the last sweep left them: the same figures on every replica. */
  async counts(): Promise<Array<{ cause: FindingCause; count: number }>> {
    const { rows } = await this.pool.query<{ cause: FindingCause; count: string }>('SELECT cause, count(*) AS count FROM supervisor.watchdog_findings GROUP BY cause');
    return rows.map((row) => ({ cause: row.cause, count: Number(row.count) }));
  }
}
