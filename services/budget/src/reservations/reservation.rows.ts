import type { PoolClient } from 'pg';
import {
  budgetReservationStream,
  type Actor,
  type BudgetAmount,
  type BudgetScopeKind,
  type BudgetUnit,
  type BudgetWindow,
  type ReservationState,
} from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { addSpend } from './ledger';
import { evolve, type ExistingReservation, type ReservationEvent } from './reservation.decider';

type Queryable = Pick<PoolClient, 'query'>;

export interface ReservationRow extends ExistingReservation {
  workspaceId: string;
  idempotencyKey: string;
  streamVersion: number;
}

interface RawReservation {
  reservation_id: string;
  workspace_id: string;
  run_id: string;
  idempotency_key: string;
  amounts: BudgetAmount[];
  state: ReservationState;
  expires_at: Date;
  stream_version: string;
}

const COLUMNS = 'reservation_id, workspace_id, run_id, idempotency_key, amounts, state, expires_at, stream_version';

function toRow(raw: RawReservation): Omit<ReservationRow, 'lines'> {
  return {
    status: raw.state,
    reservationId: raw.reservation_id,
    workspaceId: raw.workspace_id,
    runId: raw.run_id,
    idempotencyKey: raw.idempotency_key,
    amounts: raw.amounts,
    expiresAt: raw.expires_at,
    streamVersion: Number(raw.stream_version),
  };
}

export async function findReservationByKey(client: Queryable, workspaceId: string, idempotencyKey: string): Promise<Omit<ReservationRow, 'lines'> | null> {
  const { rows } = await client.query<RawReservation>(`SELECT ${COLUMNS} FROM budget.reservations WHERE workspace_id = $1 AND idempotency_key = $2`, [
    workspaceId,
    idempotencyKey,
  ]);
  return rows[0] ? toRow(rows[0]) : null;
}

/** The reservation and its live holds, the reservation row locked for the transaction. */
export async function loadReservationForUpdate(
  client: Queryable,
  reservationId: string,
  workspaceId: string | null,
  options: { skipLocked?: boolean } = {},
): Promise<ReservationRow | null> {
  const { rows } = await client.query<RawReservation>(
    `SELECT ${COLUMNS} FROM budget.reservations WHERE reservation_id = $1 FOR UPDATE ${options.skipLocked ? 'SKIP LOCKED' : ''}`,
    [reservationId],
  );
  const raw = rows[0];
  if (!raw || (workspaceId !== null && raw.workspace_id !== workspaceId)) return null;
  const { rows: lines } = await client.query<{ scope_ref: string; amount: string; kind: BudgetScopeKind; owner_id: string; unit: BudgetUnit; win: BudgetWindow }>(
    `SELECT h.scope_ref, h.amount, s.kind, s.owner_id, s.unit, s.win
       FROM budget.holds h JOIN budget.scopes s USING (scope_ref)
      WHERE h.reservation_id = $1 ORDER BY h.scope_ref`,
    [reservationId],
  );
  return {
    ...toRow(raw),
    lines: lines.map((line) => ({
      scopeRef: Number(line.scope_ref),
      scope: { kind: line.kind, id: line.owner_id, unit: line.unit, window: line.win },
      amount: Number(line.amount),
    })),
  };
}

/**
 * Applies the decided events to the ledger rows and appends them to the reservation's stream,
 * in the caller's transaction. The caller holds the reservation row and, for a settlement, the
 * scope rows of its holds.
 */
export async function commitReservationEvents(
  client: PoolClient,
  store: PostgresEventStore,
  reservation: ReservationRow,
  events: ReservationEvent[],
  context: { now: string; actor: Actor },
): Promise<ReservationRow> {
  if (events.length === 0) return reservation;
  let state: ExistingReservation = reservation;
  for (const event of events) {
    switch (event.type) {
      case 'budget.settled':
        for (const line of reservation.lines) {
          const spent = event.data.scopes.find((scope) => scope.kind === line.scope.kind && scope.id === line.scope.id && scope.unit === line.scope.unit && scope.window === line.scope.window)?.spent ?? 0;
          await addSpend(client, line.scopeRef, line.scope.window, context.now, spent);
        }
        break;
      case 'budget.overspent':
        await client.query(`UPDATE budget.scopes SET blocked_at = $2::timestamptz WHERE scope_ref = ANY($1::bigint[]) AND blocked_at IS NULL`, [
          reservation.lines.filter((line) => line.scope.unit === event.data.unit).map((line) => line.scopeRef),
          context.now,
        ]);
        break;
      case 'budget.released':
      case 'budget.expired':
        break;
    }
    state = evolve(state, event);
  }
  await client.query(`DELETE FROM budget.holds WHERE reservation_id = $1`, [reservation.reservationId]);
  await client.query(
    `UPDATE budget.reservations SET state = $2, finished_at = $3::timestamptz, stream_version = $4 WHERE reservation_id = $1`,
    [reservation.reservationId, state.status, context.now, reservation.streamVersion + events.length],
  );
  await store.append(
    budgetReservationStream(reservation.reservationId),
    reservation.streamVersion,
    events.map((event) => ({ type: event.type, data: event.data, actor: context.actor })),
    { workspaceId: reservation.workspaceId, client },
  );
  return { ...reservation, ...state, streamVersion: reservation.streamVersion + events.length };
}
