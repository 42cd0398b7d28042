import type { PoolClient } from 'pg';
import {
  budgetScopeStream,
  type Actor,
  type BudgetScope,
  type BudgetScopeKind,
  type BudgetUnit,
  type BudgetWindow,
} from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { windowLengthMs } from '../limits/scope-limits';

type Queryable = Pick<PoolClient, 'query'>;

export interface ScopeRow {
  scopeRef: number;
  workspaceId: string;
  scope: BudgetScope;
  limit: number | null;
  blockedAt: Date | null;
  warnedAt: Date | null;
  streamVersion: number;
}

export interface ScopeUsage {
  spent: number;
  held: number;
}

interface RawScope {
  scope_ref: string;
  workspace_id: string;
  kind: BudgetScopeKind;
  owner_id: string;
  unit: BudgetUnit;
  win: BudgetWindow;
  limit_amount: string | null;
  blocked_at: Date | null;
  warned_at: Date | null;
  stream_version: string;
}

const SCOPE_COLUMNS = 'scope_ref, workspace_id, kind, owner_id, unit, win, limit_amount, blocked_at, warned_at, stream_version';

function toScopeRow(row: RawScope): ScopeRow {
  return {
    scopeRef: Number(row.scope_ref),
    workspaceId: row.workspace_id,
    scope: { kind: row.kind, id: row.owner_id, unit: row.unit, window: row.win },
    limit: row.limit_amount === null ? null : Number(row.limit_amount),
    blockedAt: row.blocked_at,
    warnedAt: row.warned_at,
    streamVersion: Number(row.stream_version),
  };
}

/**
 * The database clock, read after the scope locks are held. Every writer of a scope reads it
 * under the same lock, so the instants seen by successive writers of a scope never go back and
 * a hold judged expired by one is expired for every later one. Kept as text: microseconds survive.
 */
export async function databaseNow(client: Queryable): Promise<string> {
  const { rows } = await client.query<{ now: string }>(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now`);
  return rows[0]!.now;
}

/**
 * Locks the limited scopes of a run for `units`, always in scope_ref order: concurrent
 * reservations over overlapping scopes queue instead of deadlocking.
 */
export async function lockRunScopes(
  client: Queryable,
  target: { workspaceId: string; runId: string; deploymentId: string; units: string[] },
): Promise<ScopeRow[]> {
  const { rows } = await client.query<RawScope>(
    `SELECT ${SCOPE_COLUMNS} FROM budget.scopes
      WHERE workspace_id = $1 AND unit = ANY($4::text[]) AND limit_amount IS NOT NULL
        AND ((kind = 'run' AND owner_id = $2) OR (kind = 'deployment' AND owner_id = $3) OR (kind = 'workspace' AND owner_id = $1))
      ORDER BY scope_ref
      FOR UPDATE`,
    [target.workspaceId, target.runId, target.deploymentId, target.units],
  );
  return rows.map(toScopeRow);
}

export async function lockScopes(client: Queryable, scopeRefs: number[]): Promise<ScopeRow[]> {
  if (scopeRefs.length === 0) return [];
  const { rows } = await client.query<RawScope>(
    `SELECT ${SCOPE_COLUMNS} FROM budget.scopes WHERE scope_ref = ANY($1::bigint[]) ORDER BY scope_ref FOR UPDATE`,
    [scopeRefs],
  );
  return rows.map(toScopeRow);
}

export async function findScope(client: Queryable, workspaceId: string, scope: BudgetScope, lock: boolean): Promise<ScopeRow | null> {
  const { rows } = await client.query<RawScope>(
    `SELECT ${SCOPE_COLUMNS} FROM budget.scopes
      WHERE workspace_id = $1 AND kind = $2 AND owner_id = $3 AND unit = $4 AND win = $5 ${lock ? 'FOR UPDATE' : ''}`,
    [workspaceId, scope.kind, scope.id, scope.unit, scope.window],
  );
  return rows[0] ? toScopeRow(rows[0]) : null;
}

/** Settled spend inside each scope's window and live holds (not past their TTL) at `now`. */
export async function readUsage(client: Queryable, scopeRefs: number[], now: string): Promise<Map<number, ScopeUsage>> {
  const usage = new Map<number, ScopeUsage>();
  if (scopeRefs.length === 0) return usage;
  const { rows } = await client.query<{ scope_ref: string; spent: string; held: string }>(
    `SELECT s.scope_ref,
            COALESCE((SELECT sum(b.spent) FROM budget.buckets b
                       WHERE b.scope_ref = s.scope_ref AND b.bucket_start >= budget.window_floor(s.win, $2::timestamptz)), 0)::bigint AS spent,
            COALESCE((SELECT sum(h.amount) FROM budget.holds h
                       WHERE h.scope_ref = s.scope_ref AND h.expires_at > $2::timestamptz), 0)::bigint AS held
       FROM budget.scopes s WHERE s.scope_ref = ANY($1::bigint[])`,
    [scopeRefs, now],
  );
  for (const row of rows) usage.set(Number(row.scope_ref), { spent: Number(row.spent), held: Number(row.held) });
  return usage;
}

/** Adds settled spend to the scope's bucket of `now`. */
export async function addSpend(client: Queryable, scopeRef: number, window: BudgetWindow, now: string, amount: number): Promise<void> {
  if (amount === 0) return;
  await client.query(
    `INSERT INTO budget.buckets (scope_ref, bucket_start, spent) VALUES ($1, budget.bucket_start($2, $3::timestamptz), $4)
     ON CONFLICT (scope_ref, bucket_start) DO UPDATE SET spent = budget.buckets.spent + EXCLUDED.spent`,
    [scopeRef, window, now, amount],
  );
}

/**
 * Announces `budget.warning` for each locked scope whose spent + held reached the threshold,
 * once per scope and window: a rolling window warns again only after a whole window has passed
 * since its last warning; a run's budget warns once.
 */
export async function warnOnThreshold(
  client: PoolClient,
  store: PostgresEventStore,
  input: { scopes: ScopeRow[]; usage: Map<number, ScopeUsage>; now: string; percent: number; reservationId: string | null; actor: Actor },
): Promise<void> {
  const nowMs = Date.parse(input.now);
  for (const row of input.scopes) {
    const usage = input.usage.get(row.scopeRef);
    if (!usage || row.limit === null || row.limit === 0) continue;
    if ((usage.spent + usage.held) * 100 < row.limit * input.percent) continue;
    const length = windowLengthMs(row.scope.window);
    if (row.warnedAt && (length === null || nowMs - row.warnedAt.getTime() < length)) continue;
    await client.query(`UPDATE budget.scopes SET warned_at = $2::timestamptz, stream_version = stream_version + 1 WHERE scope_ref = $1`, [
      row.scopeRef,
      input.now,
    ]);
    await store.append(
      budgetScopeStream(row.scopeRef),
      row.streamVersion,
      [
        {
          type: 'budget.warning',
          data: { scope: row.scope, limit: row.limit, spent: usage.spent, held: usage.held, thresholdPercent: input.percent, reservationId: input.reservationId },
          actor: input.actor,
        },
      ],
      { workspaceId: row.workspaceId, client },
    );
    row.warnedAt = new Date(nowMs);
    row.streamVersion += 1;
  }
}
