import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { streamCategory, type DecodedEvent, type IntakeEventData, type TriggerBinding } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { signalChange } from '../../../shared/database';
import { SCHEDULER_OPTIONS, type ResolvedSchedulerOptions } from '../../../scheduler.options';
import { desiredSchedules } from '../../cron-bindings';

export type ApplyOutcome = 'applied' | 'ignored' | 'not_relevant';

const RELEVANT = new Set(['deployment.created', 'deployment.rolled_back', 'deployment.updated', 'deployment.revoked']);

/**
 * Projects a deployment's cron triggers into scheduler.schedules. Idempotent: the deployment's
 * last applied global position is stored in the same transaction as the change, and an event
 * at or below it (a redelivery, a republished copy, an older event) changes nothing.
 * Pausing does not stop the schedules: intake defers activations of a paused deployment.
 */
@Injectable()
export class ApplyDeploymentEvent {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    @Inject(SCHEDULER_OPTIONS) private readonly options: ResolvedSchedulerOptions,
  ) {}

  async execute(event: DecodedEvent): Promise<ApplyOutcome> {
    if (!RELEVANT.has(event.type)) return 'not_relevant';
    const deploymentId = deploymentIdOf(event);
    const outcome = await this.store.transaction(async (client) => {
      const state = await lockDeployment(client, deploymentId, event.workspaceId);
      if (state.lastPosition >= event.globalPosition) return 'ignored' as const;
      let revoked = state.revoked;
      switch (event.type) {
        case 'deployment.created':
          await this.replaceCronSet(client, deploymentId, event, (event.data as IntakeEventData<'deployment.created'>).triggers, !revoked);
          break;
        case 'deployment.rolled_back':
        case 'deployment.updated':
          await this.replaceCronSet(client, deploymentId, event, (event.data as IntakeEventData<'deployment.rolled_back'>).triggers, !revoked);
          break;
        case 'deployment.revoked':
          revoked = true;
          await client.query(
            `UPDATE scheduler.schedules SET active = false, updated_at = now() WHERE deployment_id = $1 AND active`,
            [deploymentId],
          );
          break;
      }
      await client.query(
        `UPDATE scheduler.deployments SET last_position = $2, revoked = $3, updated_at = now() WHERE deployment_id = $1`,
        [deploymentId, event.globalPosition, revoked],
      );
      return 'applied' as const;
    });
    if (outcome === 'applied') await signalChange(this.pool, this.options.notifyChannel);
    return outcome;
  }

  /**
   * Makes the deployment's schedules the cron bindings of `triggers`: a kept trigger whose
   * expression and zone are unchanged keeps its next due instant; a new or changed one starts
   * after the event; a dropped one stops.
   */
  private async replaceCronSet(client: PoolClient, deploymentId: string, event: DecodedEvent, triggers: TriggerBinding[], active: boolean): Promise<void> {
    const { schedules, rejected } = desiredSchedules(triggers, new Date(event.occurredAt));
    for (const reject of rejected) {
      this.options.log('warn', 'cron trigger not scheduled', { deploymentId, triggerId: reject.triggerId, issues: reject.issues });
    }
    for (const schedule of schedules) {
      const { rowCount } = await client.query(
        `INSERT INTO scheduler.schedules (trigger_id, workspace_id, deployment_id, expression, timezone, missed, next_due_at, active)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (trigger_id) DO UPDATE
           SET expression = EXCLUDED.expression, timezone = EXCLUDED.timezone, missed = EXCLUDED.missed, active = EXCLUDED.active,
               next_due_at = CASE
                 WHEN scheduler.schedules.active AND scheduler.schedules.expression = EXCLUDED.expression
                      AND scheduler.schedules.timezone = EXCLUDED.timezone
                 THEN scheduler.schedules.next_due_at ELSE EXCLUDED.next_due_at END,
               updated_at = now()
         WHERE scheduler.schedules.deployment_id = EXCLUDED.deployment_id`,
        [schedule.triggerId, event.workspaceId, deploymentId, schedule.expression, schedule.timezone, schedule.missed, schedule.firstDueAt, active],
      );
      if (rowCount === 0) {
        this.options.log('warn', 'cron trigger id belongs to another deployment; not scheduled', { deploymentId, triggerId: schedule.triggerId });
      }
    }
    await client.query(
      `UPDATE scheduler.schedules SET active = false, updated_at = now()
        WHERE deployment_id = $1 AND active AND NOT (trigger_id = ANY($2::text[]))`,
      [deploymentId, schedules.map((schedule) => schedule.triggerId)],
    );
  }
}

/** Deployment events live on `deployment-<deploymentId>`. */
function deploymentIdOf(event: DecodedEvent): string {
  return event.stream.slice(streamCategory(event.stream).length + 1);
}

/** The deployment's projection state, locked for the transaction (created on first sight). */
async function lockDeployment(client: PoolClient, deploymentId: string, workspaceId: string): Promise<{ lastPosition: number; revoked: boolean }> {
  await client.query(
    `INSERT INTO scheduler.deployments (deployment_id, workspace_id) VALUES ($1, $2) ON CONFLICT (deployment_id) DO NOTHING`,
    [deploymentId, workspaceId],
  );
  const { rows } = await client.query<{ last_position: string; revoked: boolean }>(
    `SELECT last_position, revoked FROM scheduler.deployments WHERE deployment_id = $1 FOR UPDATE`,
    [deploymentId],
  );
  return { lastPosition: Number(rows[0]!.last_position), revoked: rows[0]!.revoked };
}
