import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { budgetScopeStream, type BudgetCommands } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { BudgetScopeNotFoundError } from '../../../shared/errors';
import { findScope } from '../../ledger';

export type ReviewScopeRequest = z.output<typeof BudgetCommands.review.request>;
export type ReviewScopeResult = z.input<typeof BudgetCommands.review.response>;

/** An operator's review lifts the block an overspend put on a scope; an unblocked scope is unchanged. */
@Injectable()
export class ReviewScope {
  constructor(private readonly store: PostgresEventStore) {}

  async execute(request: ReviewScopeRequest): Promise<ReviewScopeResult> {
    return this.store.transaction(async (client) => {
      const row = await findScope(client, request.workspaceId, request.scope, true);
      if (!row) throw new BudgetScopeNotFoundError(request.scope);
      if (!row.blockedAt) return { scope: row.scope, outcome: 'unchanged' as const };
      await client.query(`UPDATE budget.scopes SET blocked_at = NULL, stream_version = stream_version + 1 WHERE scope_ref = $1`, [row.scopeRef]);
      await this.store.append(
        budgetScopeStream(row.scopeRef),
        row.streamVersion,
        [{ type: 'budget.reviewed', data: { scope: row.scope, note: request.note }, actor: request.actor }],
        { workspaceId: request.workspaceId, client },
      );
      return { scope: row.scope, outcome: 'reviewed' as const };
    });
  }
}
