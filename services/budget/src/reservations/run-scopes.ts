import type { PoolClient } from 'pg';
import { scopeLimits } from '../limits/scope-limits';
import { BudgetLimitsNotFoundError, BudgetRunNotFoundError } from '../shared/errors';

export interface KnownRun {
  runId: string;
  workspaceId: string;
  deploymentId: string;
}

/**
 * The run as admitted, with its run scopes in place: they are created on first use from the
 * limit set of the deployment digest the run is pinned to, so a later rollback of the
 * deployment does not change the limits of a run already admitted.
 */
export async function loadRunWithScopes(client: PoolClient, workspaceId: string, runId: string): Promise<KnownRun> {
  const { rows } = await client.query<{ deployment_id: string; effective_digest: string; scopes_created: boolean }>(
    `SELECT deployment_id, effective_digest, scopes_created FROM budget.runs WHERE run_id = $1 AND workspace_id = $2`,
    [runId, workspaceId],
  );
  const run = rows[0];
  if (!run) throw new BudgetRunNotFoundError(runId);
  const known = { runId, workspaceId, deploymentId: run.deployment_id };
  if (run.scopes_created) return known;
  const { rows: sets } = await client.query<{ budgets: unknown }>(
    `SELECT budgets FROM budget.limit_sets WHERE deployment_id = $1 AND effective_digest = $2`,
    [run.deployment_id, run.effective_digest],
  );
  if (!sets[0]) throw new BudgetLimitsNotFoundError(run.deployment_id);
  for (const limit of scopeLimits(sets[0].budgets).run) {
    await client.query(
      `INSERT INTO budget.scopes (workspace_id, kind, owner_id, unit, win, limit_amount) VALUES ($1, 'run', $2, $3, $4, $5)
       ON CONFLICT (kind, owner_id, unit, win) DO NOTHING`,
      [workspaceId, runId, limit.unit, limit.window, limit.limit],
    );
  }
  await client.query(`UPDATE budget.runs SET scopes_created = true WHERE run_id = $1`, [runId]);
  return known;
}
