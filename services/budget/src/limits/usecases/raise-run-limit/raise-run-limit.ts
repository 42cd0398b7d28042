import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import type { z } from 'zod';
import { budgetScopeStream, type BudgetCommands, type BudgetScope, type RunLimitRaise } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { BudgetRaiseConflictError, BudgetScopeNotFoundError } from '../../../shared/errors';
import { databaseNow, lockRunScopes, readUsage, type ScopeRow } from '../../../reservations/ledger';
import { loadRunWithScopes } from '../../../reservations/run-scopes';
import { decideRunLimitRaise, type LockedUsdScope } from '../../run-limit-raise';

export type RaiseRunLimitRequest = z.output<typeof BudgetCommands.raiseRunLimit.request>;

interface RaiseRow {
  run_id: string;
  scope_ref: string;
  requested: string;
  raised: string;
  limit_before: string;
  limit_after: string;
  capped_by: BudgetScope | null;
}

/**
 * Raises a run's own USD limit for an approved budget request, once per attention. The run's
 * USD scopes are locked in the reservations' order, so the cap is judged against the spend and
 * holds every reservation before it committed, and no reservation slips in between.
 */
@Injectable()
export class RaiseRunLimit {
  constructor(private readonly store: PostgresEventStore) {}

  execute(request: RaiseRunLimitRequest): Promise<RunLimitRaise> {
    return this.store.transaction((client) => this.raise(client, request));
  }

  private async raise(client: PoolClient, request: RaiseRunLimitRequest): Promise<RunLimitRaise> {
    const run = await loadRunWithScopes(client, request.workspaceId, request.runId);
    const scopes = await lockRunScopes(client, { ...run, units: ['usd'] });
    const runScope = scopes.find((row) => row.scope.kind === 'run');
    if (!runScope || runScope.limit === null) throw new BudgetScopeNotFoundError({ kind: 'run', id: request.runId, unit: 'usd', window: 'run' });
    // Read after the lock: a concurrent repeat of this attention has committed by now.
    const earlier = await client.query<RaiseRow>('SELECT * FROM budget.run_limit_raises WHERE attention_id = $1', [request.attentionId]);
    if (earlier.rows[0]) return repeated(earlier.rows[0], request, runScope);

    const now = await databaseNow(client);
    const usage = await readUsage(client, scopes.map((row) => row.scopeRef), now);
    const locked = (row: ScopeRow): LockedUsdScope => ({ scope: row.scope, limit: row.limit ?? 0, ...(usage.get(row.scopeRef) ?? { spent: 0, held: 0 }) });
    const decision = decideRunLimitRaise({
      run: locked(runScope),
      others: scopes.filter((row) => row !== runScope).map(locked),
      requested: request.amount,
      approverRole: request.actorRole,
    });
    await client.query(
      `INSERT INTO budget.run_limit_raises (attention_id, workspace_id, run_id, scope_ref, requested, raised, limit_before, limit_after, capped_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)`,
      [request.attentionId, request.workspaceId, request.runId, runScope.scopeRef, request.amount, decision.raised, decision.limitBefore, decision.limitAfter, JSON.stringify(decision.cappedBy)],
    );
    await client.query(`UPDATE budget.scopes SET limit_amount = $2, stream_version = stream_version + 1 WHERE scope_ref = $1`, [runScope.scopeRef, decision.limitAfter]);
    await this.store.append(
      budgetScopeStream(runScope.scopeRef),
      runScope.streamVersion,
      [
        {
          type: 'budget.run_limit_raised',
          data: { scope: runScope.scope, runId: request.runId, attentionId: request.attentionId, requested: request.amount, ...decision, actorRole: request.actorRole },
          actor: request.actor,
        },
      ],
      { workspaceId: request.workspaceId, client },
    );
    return { attentionId: request.attentionId, scope: runScope.scope, requested: request.amount, ...decision, duplicate: false };
  }
}

function repeated(row: RaiseRow, request: RaiseRunLimitRequest, runScope: ScopeRow): RunLimitRaise {
  if (row.run_id !== request.runId || Number(row.requested) !== request.amount) throw new BudgetRaiseConflictError(request.attentionId);
  return {
    attentionId: request.attentionId,
    scope: runScope.scope,
    requested: Number(row.requested),
    raised: Number(row.raised),
    limitBefore: Number(row.limit_before),
    limitAfter: Number(row.limit_after),
    cappedBy: row.capped_by,
    duplicate: true,
  };
}
