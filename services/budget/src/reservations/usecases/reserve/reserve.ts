import { Inject, Injectable } from '@nestjs/common';
import { DatabaseError, type Pool, type PoolClient } from 'pg';
import type { z } from 'zod';
import { v7 as uuidv7 } from 'uuid';
import { budgetReservationStream, type BudgetCommands, type ReservationRefused, type ReserveResult } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { BUDGET_OPTIONS, type ResolvedBudgetOptions } from '../../../budget.options';
import { BudgetIdempotencyConflictError } from '../../../shared/errors';
import { databaseNow, lockRunScopes, readUsage, warnOnThreshold, type ScopeRow, type ScopeUsage } from '../../ledger';
import { findReservationByKey, type ReservationRow } from '../../reservation.rows';
import { loadRunWithScopes } from '../../run-scopes';

export type ReserveRequest = z.output<typeof BudgetCommands.reserve.request>;

const UNIQUE_VIOLATION = '23505';
const ATTEMPTS = 3;

/**
 * Holds the amounts in every limited scope of the run, all or none: the scope rows are locked in
 * one transaction in a fixed order, checked against spend and live holds read after the locks,
 * and the holds and `budget.reserved` commit together. See docs/adr/0010-budget-reservations.md.
 */
@Injectable()
export class Reserve {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    @Inject(BUDGET_OPTIONS) private readonly options: ResolvedBudgetOptions,
  ) {}

  async execute(request: ReserveRequest): Promise<ReserveResult> {
    const known = await findReservationByKey(this.pool, request.workspaceId, request.idempotencyKey);
    if (known) return duplicate(known, request);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.transaction((client) => this.reserve(client, request));
      } catch (error) {
        // The same key was first used concurrently, by a reservation that locked no scope.
        if (error instanceof DatabaseError && error.code === UNIQUE_VIOLATION && attempt < ATTEMPTS) {
          const winner = await findReservationByKey(this.pool, request.workspaceId, request.idempotencyKey);
          if (winner) return duplicate(winner, request);
          continue;
        }
        throw error;
      }
    }
  }

  private async reserve(client: PoolClient, request: ReserveRequest): Promise<ReserveResult> {
    const run = await loadRunWithScopes(client, request.workspaceId, request.runId);
    const scopes = await lockRunScopes(client, { ...run, units: request.amounts.map((entry) => entry.unit) });
    // A concurrent first use of the key that locked the same scopes has committed by now.
    const known = await findReservationByKey(client, request.workspaceId, request.idempotencyKey);
    if (known) return duplicate(known, request);
    const now = await databaseNow(client);
    const usage = await readUsage(client, scopes.map((scope) => scope.scopeRef), now);
    const refusal = firstRefusal(scopes, usage, request);
    if (refusal) return refusal;

    const reservationId = uuidv7();
    const { rows } = await client.query<{ expires_at: string }>(
      `INSERT INTO budget.reservations (reservation_id, workspace_id, run_id, idempotency_key, amounts, state, expires_at, created_at, stream_version)
       VALUES ($1, $2, $3, $4, $5::jsonb, 'held', $6::timestamptz + make_interval(secs => $7), $6::timestamptz, 1)
       RETURNING to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS expires_at`,
      [reservationId, request.workspaceId, request.runId, request.idempotencyKey, JSON.stringify(request.amounts), now, request.ttlSeconds],
    );
    const expiresAt = rows[0]!.expires_at;
    const lines = scopes.map((scope) => ({ scope, amount: amountOf(request, scope) }));
    if (lines.length) {
      await client.query(
        `INSERT INTO budget.holds (reservation_id, scope_ref, amount, expires_at)
         SELECT $1, unnest($2::bigint[]), unnest($3::bigint[]), $4::timestamptz`,
        [reservationId, lines.map((line) => line.scope.scopeRef), lines.map((line) => line.amount), expiresAt],
      );
    }
    await this.store.append(
      budgetReservationStream(reservationId),
      'no_stream',
      [
        {
          type: 'budget.reserved',
          data: {
            reservationId,
            runId: request.runId,
            deploymentId: run.deploymentId,
            idempotencyKey: request.idempotencyKey,
            amounts: request.amounts,
            scopes: lines.map((line) => ({ ...line.scope.scope, amount: line.amount })),
            expiresAt,
          },
          actor: request.actor,
        },
      ],
      { workspaceId: request.workspaceId, client },
    );
    for (const line of lines) {
      const current = usage.get(line.scope.scopeRef)!;
      usage.set(line.scope.scopeRef, { spent: current.spent, held: current.held + line.amount });
    }
    await warnOnThreshold(client, this.store, { scopes, usage, now, percent: this.options.warningPercent, reservationId, actor: request.actor });
    return { reservationId, state: 'held', expiresAt, duplicate: false };
  }
}

function amountOf(request: ReserveRequest, scope: ScopeRow): number {
  return request.amounts.find((entry) => entry.unit === scope.scope.unit)?.amount ?? 0;
}

/** The first scope, in lock order, that is blocked or has no room for its unit's amount. */
function firstRefusal(scopes: ScopeRow[], usage: Map<number, ScopeUsage>, request: ReserveRequest): ReservationRefused | null {
  for (const scope of scopes) {
    const { spent, held } = usage.get(scope.scopeRef) ?? { spent: 0, held: 0 };
    const requested = amountOf(request, scope);
    const limit = scope.limit ?? 0;
    const base = { state: 'refused' as const, scope: scope.scope, limit, spent, held, requested };
    if (scope.blockedAt) return { ...base, reason: 'scope_blocked' };
    if (spent + held + requested > limit) return { ...base, reason: 'budget_exhausted' };
  }
  return null;
}

function duplicate(known: Omit<ReservationRow, 'lines'>, request: ReserveRequest): ReserveResult {
  const sameAmounts =
    known.amounts.length === request.amounts.length &&
    request.amounts.every((entry) => known.amounts.some((held) => held.unit === entry.unit && held.amount === entry.amount));
  if (known.runId !== request.runId || !sameAmounts) throw new BudgetIdempotencyConflictError(known.reservationId);
  return { reservationId: known.reservationId, state: known.status, expiresAt: known.expiresAt.toISOString(), duplicate: true };
}
