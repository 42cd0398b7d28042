import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { streamCategory, type DecodedEvent, type IntakeEventData } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { scopeLimits, workspaceDailyLimit } from '../../scope-limits';

export type ApplyOutcome = 'applied' | 'ignored' | 'not_relevant';

const DEPLOYMENT_EVENTS = new Set(['deployment.created', 'deployment.rolled_back', 'deployment.updated', 'deployment.revoked']);

/**
 * Projects the limits of deployments and the run -> deployment link of admitted runs into the
 * budget tables. Idempotent: each deployment and run stores the global position of the last
 * event applied to it, in the same transaction as the change, and ignores anything at or below it.
 */
@Injectable()
export class ApplyLimitsEvent {
  constructor(private readonly store: PostgresEventStore) {}

  async execute(event: DecodedEvent): Promise<ApplyOutcome> {
    if (event.type === 'run.admitted') return this.admitRun(event as DecodedEvent<IntakeEventData<'run.admitted'>>);
    if (!DEPLOYMENT_EVENTS.has(event.type)) return 'not_relevant';
    const deploymentId = event.stream.slice(streamCategory(event.stream).length + 1);
    return this.store.transaction(async (client) => {
      const lastPosition = await lockDeployment(client, deploymentId, event.workspaceId);
      if (lastPosition >= event.globalPosition) return 'ignored';
      if (event.type === 'deployment.revoked') {
        await client.query(`UPDATE budget.deployments SET revoked = true, last_position = $2, updated_at = now() WHERE deployment_id = $1`, [
          deploymentId,
          event.globalPosition,
        ]);
      } else {
        const data = event.data as IntakeEventData<'deployment.created'> | IntakeEventData<'deployment.rolled_back'>;
        // Deployments announced before limits travelled with the event declare none.
        const budgets = data.limits?.budgets ?? {};
        await client.query(
          `INSERT INTO budget.limit_sets (deployment_id, effective_digest, workspace_id, budgets) VALUES ($1, $2, $3, $4::jsonb)
           ON CONFLICT (deployment_id, effective_digest) DO NOTHING`,
          [deploymentId, data.effectiveDigest, event.workspaceId, JSON.stringify(budgets)],
        );
        await client.query(
          `UPDATE budget.deployments SET effective_digest = $2, budgets = $3::jsonb, last_position = $4, updated_at = now() WHERE deployment_id = $1`,
          [deploymentId, data.effectiveDigest, JSON.stringify(budgets), event.globalPosition],
        );
        await syncDeploymentScopes(client, event.workspaceId, deploymentId, budgets);
      }
      await syncWorkspaceScope(client, event.workspaceId);
      return 'applied';
    });
  }

  private async admitRun(event: DecodedEvent<IntakeEventData<'run.admitted'>>): Promise<ApplyOutcome> {
    const { rowCount } = await this.store.transaction((client) =>
      client.query(
        `INSERT INTO budget.runs (run_id, workspace_id, deployment_id, effective_digest, last_position) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (run_id) DO NOTHING`,
        [event.data.runId, event.workspaceId, event.data.deploymentId, event.data.effectiveDigest, event.globalPosition],
      ),
    );
    return rowCount ? 'applied' : 'ignored';
  }
}

async function lockDeployment(client: PoolClient, deploymentId: string, workspaceId: string): Promise<number> {
  await client.query(`INSERT INTO budget.deployments (deployment_id, workspace_id) VALUES ($1, $2) ON CONFLICT (deployment_id) DO NOTHING`, [
    deploymentId,
    workspaceId,
  ]);
  const { rows } = await client.query<{ last_position: string }>(`SELECT last_position FROM budget.deployments WHERE deployment_id = $1 FOR UPDATE`, [deploymentId]);
  return Number(rows[0]!.last_position);
}

/** The deployment's scopes take the new limits; a limit no longer declared stops limiting. */
async function syncDeploymentScopes(client: PoolClient, workspaceId: string, deploymentId: string, budgets: unknown): Promise<void> {
  const limits = scopeLimits(budgets).deployment;
  for (const limit of limits) {
    await client.query(
      `INSERT INTO budget.scopes (workspace_id, kind, owner_id, unit, win, limit_amount) VALUES ($1, 'deployment', $2, $3, $4, $5)
       ON CONFLICT (kind, owner_id, unit, win) DO UPDATE SET limit_amount = EXCLUDED.limit_amount`,
      [workspaceId, deploymentId, limit.unit, limit.window, limit.limit],
    );
  }
  await client.query(
    `UPDATE budget.scopes SET limit_amount = NULL
      WHERE kind = 'deployment' AND owner_id = $1 AND limit_amount IS NOT NULL
        AND NOT ((unit || '/' || win) = ANY($2::text[]))`,
    [deploymentId, limits.map((limit) => `${limit.unit}/${limit.window}`)],
  );
}

/** The workspace's daily limit is the most restrictive one its live deployments declare. */
async function syncWorkspaceScope(client: PoolClient, workspaceId: string): Promise<void> {
  const { rows } = await client.query<{ budgets: unknown }>(`SELECT budgets FROM budget.deployments WHERE workspace_id = $1 AND NOT revoked`, [workspaceId]);
  const limit = workspaceDailyLimit(rows.map((row) => row.budgets));
  await client.query(
    `INSERT INTO budget.scopes (workspace_id, kind, owner_id, unit, win, limit_amount) VALUES ($1, 'workspace', $1, 'usd', 'day', $2)
     ON CONFLICT (kind, owner_id, unit, win) DO UPDATE SET limit_amount = EXCLUDED.limit_amount
     WHERE budget.scopes.limit_amount IS DISTINCT FROM EXCLUDED.limit_amount`,
    [workspaceId, limit],
  );
}
