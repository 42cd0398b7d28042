import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import type { ActorRef, DeploymentView } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { NotFoundError } from '../../shared/errors';
import { Streams } from '../../shared/ids';
import { releasableRuns } from '../../runs/admission.decider';
import { RunAdmission } from '../../runs/run-admission';
import { decideDeployment, evolveDeployment, type DeploymentCommand, type DeploymentEvent } from '../deployment.decider';
import { deploymentView, lockDeployment, type DeploymentRow } from '../deployment.rows';
import { effectiveLimits, effectiveVersion, triggerBindings, type EffectiveVersion } from '../effective-version';
import { EffectiveDefinitionStore } from '../effective-definition-store';
import { deactivateTriggers, syncTriggers } from '../trigger-table';

export interface ControlDeployment {
  workspaceId: string;
  actor: ActorRef;
  deploymentId: string;
  action: 'pause' | 'resume' | 'revoke' | 'rollback' | 'update';
  version: number | null;
  reason: string | null;
}

type Result = DeploymentView & { webhooks: { triggerId: string; secret: string }[] };

/** pause, resume, revoke and rollback: each decided on the locked state and recorded as an event. */
@Injectable()
export class ControlDeploymentUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
    private readonly definitions: EffectiveDefinitionStore,
  ) {}

  async execute(command: ControlDeployment): Promise<Result> {
    return this.store.transaction(async (client) => {
      const { rows } = await client.query<DeploymentRow>(lockDeployment, [command.deploymentId, command.workspaceId]);
      const row = rows[0];
      if (!row) throw new NotFoundError('deployment', command.deploymentId);
      const state = { status: row.status, statusReason: row.status_reason, version: row.version };
      const { decision, rollbackTarget } = await this.command(client, command, row);
      const events = decideDeployment(decision, state);
      if (events.length === 0) return { ...deploymentView(row), webhooks: [] };

      const next = events.reduce(evolveDeployment, state);
      const appended = await this.store.append(
        Streams.deployment(row.id),
        Number(row.stream_version),
        events.map((event) => ({ type: event.type, data: event.data, actor: command.actor })),
        { workspaceId: row.workspace_id, client },
      );
      const webhooks = await this.applyEffects(client, row, events, command.actor, rollbackTarget);
      const updated = await client.query<DeploymentRow>(
        `UPDATE intake.deployments SET status = $2, status_reason = $3, stream_version = $4, updated_at = now()
          WHERE id = $1 RETURNING *`,
        [row.id, next.status, next.statusReason, appended.streamVersion],
      );
      return { ...deploymentView(updated.rows[0]!), webhooks };
    });
  }

  /** The decider's command; a rollback also returns the target version it loaded, for its effects. */
  private async command(
    client: PoolClient,
    command: ControlDeployment,
    row: DeploymentRow,
  ): Promise<{ decision: DeploymentCommand; rollbackTarget?: EffectiveVersion }> {
    switch (command.action) {
      case 'pause':
        return { decision: { type: 'pause', reason: command.reason } };
      case 'resume':
        return {
          decision: {
            type: 'resume',
            releasableRuns: releasableRuns({ activeRuns: row.active_runs, heldRuns: row.held_runs, maxConcurrentRuns: row.max_concurrent_runs }),
          },
        };
      case 'revoke':
        return { decision: { type: 'revoke', reason: command.reason ?? 'revoked by an operator' } };
      case 'rollback':
      case 'update': {
        const target = await effectiveVersion(client, { workspaceId: row.workspace_id, workerId: row.worker_id, version: command.version }, row.overrides);
        await this.definitions.keep(row.workspace_id, target.effective, target.effectiveDigest);
        return {
          rollbackTarget: target,
          decision: {
            type: command.action,
            target: {
              version: target.version,
              digest: target.digest,
              effectiveDigest: target.effectiveDigest,
              maxConcurrentRuns: target.effective.bounds.maxConcurrentRuns,
              triggers: triggerBindings(row.id, target.effective),
              limits: effectiveLimits(target.effective),
            },
          },
        };
      }
    }
  }

  private async applyEffects(
    client: PoolClient,
    row: DeploymentRow,
    events: DeploymentEvent[],
    actor: ActorRef,
    rollbackTarget: EffectiveVersion | undefined,
  ): Promise<{ triggerId: string; secret: string }[]> {
    const webhooks: { triggerId: string; secret: string }[] = [];
    for (const event of events) {
      switch (event.type) {
        case 'deployment.paused':
          break;
        case 'deployment.resumed':
          await this.admission.releaseHeld(client, row, event.data.releasedRuns, actor);
          break;
        case 'deployment.revoked':
          await deactivateTriggers(client, row.id);
          await this.endHeldRuns(client, row, event.data.reason, actor);
          await this.revokeAdmittedRuns(client, row, event.data.reason, actor);
          break;
        case 'deployment.rolled_back':
        case 'deployment.updated': {
          const { data } = event;
          if (!rollbackTarget) throw new Error('a version change was decided without its target version');
          await client.query(
            `UPDATE intake.deployments SET version = $2, digest = $3, effective_digest = $4, effective = $5::jsonb, triggers = $6::jsonb,
                    max_concurrent_runs = $7 WHERE id = $1`,
            [row.id, data.version, data.digest, data.effectiveDigest, JSON.stringify(rollbackTarget.effective), JSON.stringify(data.triggers), data.maxConcurrentRuns],
          );
          webhooks.push(...(await syncTriggers(client, { id: row.id, workspaceId: row.workspace_id }, data.triggers)));
          break;
        }
        default: {
          const unreachable: never = event;
          throw new Error(`unhandled event ${JSON.stringify(unreachable)}`);
        }
      }
    }
    return webhooks;
  }

  /**
   * Admitted runs are in a supervisor's hands (or about to be): each gets a revoke request in its
   * control stream, which ends it as revoked at its next step, a call in flight cut.
   */
  private async revokeAdmittedRuns(client: PoolClient, row: DeploymentRow, reason: string, actor: ActorRef): Promise<void> {
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM intake.runs WHERE deployment_id = $1 AND hold IS NULL AND state IN ('queued', 'running', 'waiting')`,
      [row.id],
    );
    for (const run of rows) {
      await this.store.append(Streams.runControl(run.id), 'any', [{ type: 'run.revoke_requested', data: { reason }, actor }], { workspaceId: row.workspace_id, client });
    }
  }

  /** Runs still waiting for admission can never start under a revoked deployment: they end as revoked. */
  private async endHeldRuns(client: PoolClient, row: DeploymentRow, reason: string, actor: ActorRef): Promise<void> {
    const { rows } = await client.query<{ id: string; stream_version: string }>(
      `SELECT id, stream_version FROM intake.runs WHERE deployment_id = $1 AND hold IS NOT NULL FOR UPDATE`,
      [row.id],
    );
    for (const run of rows) {
      await this.store.append(Streams.run(run.id), Number(run.stream_version), [{ type: 'run.revoked', data: { reason }, actor }], {
        workspaceId: row.workspace_id,
        client,
      });
      await client.query(
        `UPDATE intake.runs SET state = 'revoked', hold = NULL, stream_version = stream_version + 1, updated_at = now() WHERE id = $1`,
        [run.id],
      );
    }
    await client.query('UPDATE intake.deployments SET held_runs = 0 WHERE id = $1', [row.id]);
  }
}
