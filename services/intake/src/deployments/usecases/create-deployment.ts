import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import type { ActorRef, DeploymentView } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { NotFoundError, RequestKeyReusedError } from '../../shared/errors';
import { newId, Streams } from '../../shared/ids';
import { deploymentView, type DeploymentRow } from '../deployment.rows';
import { effectiveLimits, effectiveVersion, triggerBindings } from '../effective-version';
import { EffectiveDefinitionStore } from '../effective-definition-store';
import { syncTriggers } from '../trigger-table';

export interface CreateDeployment {
  workspaceId: string;
  actor: ActorRef;
  workerId: string;
  version: number | null;
  overrides: unknown;
  /** The same key in the workspace answers the deployment it created (same worker and version); any other use is refused. */
  requestKey?: string | null;
}

type Created = DeploymentView & { webhooks: { triggerId: string; secret: string }[]; created: boolean };

/** Makes one version runnable, narrowed by the deployment's overrides, with its triggers bound. */
@Injectable()
export class CreateDeploymentUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly definitions: EffectiveDefinitionStore,
  ) {}

  async execute(command: CreateDeployment): Promise<Created> {
    return this.store.transaction(async (client) => {
      const worker = await client.query<{ name: string }>('SELECT name FROM intake.workers WHERE id = $1 AND workspace_id = $2 FOR SHARE', [
        command.workerId,
        command.workspaceId,
      ]);
      const workerName = worker.rows[0]?.name;
      if (!workerName) throw new NotFoundError('worker', command.workerId);
      const pinned = await effectiveVersion(client, command, command.overrides);
      const requestKey = command.requestKey ?? null;
      const earlier = requestKey === null ? null : await this.earlierDeployment(client, command, requestKey, pinned.effectiveDigest);
      if (earlier) return { ...deploymentView(earlier), webhooks: [], created: false };
      await this.definitions.keep(command.workspaceId, pinned.effective, pinned.effectiveDigest);
      const id = newId();
      const bindings = triggerBindings(id, pinned.effective);
      const maxConcurrentRuns = pinned.effective.bounds.maxConcurrentRuns;
      const { rows } = await client.query<DeploymentRow>(
        `INSERT INTO intake.deployments (id, workspace_id, worker_id, worker_name, version, digest, effective_digest, effective,
                                         overrides, triggers, status, max_concurrent_runs, stream_version, request_key, request_digest)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb, 'active', $11, 1, $12, $13)
         RETURNING *`,
        [
          id, command.workspaceId, command.workerId, workerName, pinned.version, pinned.digest, pinned.effectiveDigest,
          JSON.stringify(pinned.effective), JSON.stringify(pinned.overrides), JSON.stringify(bindings), maxConcurrentRuns, requestKey,
          requestKey === null ? null : pinned.effectiveDigest,
        ],
      );
      const webhooks = await syncTriggers(client, { id, workspaceId: command.workspaceId }, bindings);
      await this.store.append(
        Streams.deployment(id),
        'no_stream',
        [
          {
            type: 'deployment.created',
            data: {
              deploymentId: id,
              workerId: command.workerId,
              workerName,
              version: pinned.version,
              digest: pinned.digest,
              effectiveDigest: pinned.effectiveDigest,
              overrides: pinned.overrides,
              maxConcurrentRuns,
              triggers: bindings,
              limits: effectiveLimits(pinned.effective),
            },
            actor: command.actor,
          },
        ],
        { workspaceId: command.workspaceId, client },
      );
      return { ...deploymentView(rows[0]!), webhooks, created: true };
    });
  }

  /**
   * The deployment `requestKey` created before, when it was for this worker and effective
   * definition; a key used for anything else is refused. Concurrent requests with one key queue
   * on the lock, so only the first creates.
   */
  private async earlierDeployment(client: PoolClient, command: CreateDeployment, requestKey: string, effectiveDigest: string): Promise<DeploymentRow | null> {
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('intake.deployment-request:' || $1 || ':' || $2, 0))`, [command.workspaceId, requestKey]);
    const { rows } = await client.query<DeploymentRow>('SELECT * FROM intake.deployments WHERE workspace_id = $1 AND request_key = $2', [command.workspaceId, requestKey]);
    const found = rows[0];
    if (!found) return null;
    if (found.worker_id !== command.workerId || found.request_digest?.trim() !== effectiveDigest) throw new RequestKeyReusedError(requestKey, found.id);
    return found;
  }
}
