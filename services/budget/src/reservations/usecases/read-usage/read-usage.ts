import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { BudgetCommands, BudgetScopeKind, BudgetUnit, BudgetWindow } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { databaseNow } from '../../ledger';

export type ReadUsageRequest = z.output<typeof BudgetCommands.usage.request>;
export type ReadUsageResult = z.input<typeof BudgetCommands.usage.response>;

/** Limit, spend in the window and live holds of the workspace's limited scopes, at one instant. */
@Injectable()
export class ReadUsage {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(request: ReadUsageRequest): Promise<ReadUsageResult> {
    const client = await this.pool.connect();
    try {
      const now = await databaseNow(client);
      const { rows } = await client.query<{
        kind: BudgetScopeKind;
        owner_id: string;
        unit: BudgetUnit;
        win: BudgetWindow;
        limit_amount: string;
        blocked_at: Date | null;
        spent: string;
        held: string;
      }>(
        `SELECT s.kind, s.owner_id, s.unit, s.win, s.limit_amount, s.blocked_at,
                COALESCE((SELECT sum(b.spent) FROM budget.buckets b
                           WHERE b.scope_ref = s.scope_ref AND b.bucket_start >= budget.window_floor(s.win, $2::timestamptz)), 0)::bigint AS spent,
                COALESCE((SELECT sum(h.amount) FROM budget.holds h
                           WHERE h.scope_ref = s.scope_ref AND h.expires_at > $2::timestamptz), 0)::bigint AS held
           FROM budget.scopes s
          WHERE s.workspace_id = $1 AND s.limit_amount IS NOT NULL
            AND ($3::text IS NULL OR s.kind = $3) AND ($4::text IS NULL OR s.owner_id = $4)
          ORDER BY s.scope_ref DESC
          LIMIT $5`,
        [request.workspaceId, now, request.kind, request.id, request.limit],
      );
      return {
        asOf: now,
        scopes: rows.map((row) => ({
          kind: row.kind,
          id: row.owner_id,
          unit: row.unit,
          window: row.win,
          limit: Number(row.limit_amount),
          spent: Number(row.spent),
          held: Number(row.held),
          blockedAt: row.blocked_at?.toISOString() ?? null,
        })),
      };
    } finally {
      client.release();
    }
  }
}
