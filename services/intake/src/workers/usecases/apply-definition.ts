import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import type { ActorRef } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { WorkerNameTakenError } from '../../shared/errors';
import type { WorkerRow } from '../worker.rows';
import { CreateVersionUseCase, type StoredVersion } from './create-version';
import { CreateWorkerUseCase, type CreateWorker } from './create-worker';

export interface ApplyDefinition {
  workspaceId: string;
  actor: ActorRef;
  source: string;
  format: 'json' | 'yaml';
  newWorker?: boolean;
}

export interface AppliedDefinition extends StoredVersion {
  workerId: string;
  workerCreated: boolean;
}

function lockByName(client: PoolClient, workspaceId: string, name: string): Promise<WorkerRow | undefined> {
  return client
    .query<WorkerRow>('SELECT * FROM intake.workers WHERE workspace_id = $1 AND name = $2 FOR UPDATE', [workspaceId, name])
    .then((result) => result.rows[0]);
}

/**
 * `worker apply`: the definition is checked first, then the worker of its name (created when
 * absent) and the version are written in one transaction, so a refused definition, or a version
 * that fails to store, leaves no empty worker behind.
 */
@Injectable()
export class ApplyDefinitionUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly workers: CreateWorkerUseCase,
    private readonly versions: CreateVersionUseCase,
  ) {}

  async execute(command: ApplyDefinition): Promise<AppliedDefinition> {
    const prepared = await this.versions.prepare(command.workspaceId, command.source, command.format);
    const { name, description } = prepared.definition;
    return this.store.transaction(async (client) => {
      const { worker, created } = await this.workerNamed(client, { workspaceId: command.workspaceId, actor: command.actor, name, description: description ?? '' });
      if (!created && command.newWorker) throw new WorkerNameTakenError(name);
      const stored = await this.versions.storeIn(client, worker, prepared, command);
      return { workerId: worker.id, workerCreated: created, ...stored };
    });
  }

  /** Locked for the version's write. An apply racing for the same name waits on the other's insert, then finds its worker. */
  private async workerNamed(client: PoolClient, worker: CreateWorker): Promise<{ worker: WorkerRow; created: boolean }> {
    for (;;) {
      const found = await lockByName(client, worker.workspaceId, worker.name);
      if (found) return { worker: found, created: false };
      if (await this.workers.insertIn(client, worker)) {
        const inserted = await lockByName(client, worker.workspaceId, worker.name);
        if (inserted) return { worker: inserted, created: true };
      }
    }
  }
}
