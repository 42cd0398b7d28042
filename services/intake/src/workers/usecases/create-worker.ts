import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { ValidationError, type ActorRef } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { WorkerNameTakenError } from '../../shared/errors';
import { newId, Streams } from '../../shared/ids';

export interface CreateWorker {
  workspaceId: string;
  actor: ActorRef;
  name: string;
  description: string;
}

const WORKER_NAME = /^[a-z][a-z0-9-]{1,62}$/;

/** A worker is a name in a workspace; its definitions arrive as versions. */
@Injectable()
export class CreateWorkerUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  async execute(command: CreateWorker): Promise<{ id: string }> {
    const created = await this.create(command);
    if (!created) throw new WorkerNameTakenError(command.name);
    return created;
  }

  /** The worker of this name: the existing one, or a new one. Racing callers get the same worker. */
  async ensure(command: CreateWorker): Promise<{ id: string; created: boolean }> {
    for (;;) {
      const created = await this.create(command);
      if (created) return { id: created.id, created: true };
      const { rows } = await this.pool.query<{ id: string }>(`SELECT id FROM intake.workers WHERE workspace_id = $1 AND name = $2`, [command.workspaceId, command.name]);
      if (rows[0]) return { id: rows[0].id, created: false };
    }
  }

  private create(command: CreateWorker): Promise<{ id: string } | null> {
    return this.store.transaction((client) => this.insertIn(client, command));
  }

  /** Inside the caller's transaction; null when the workspace already has a worker of that name. */
  async insertIn(client: PoolClient, command: CreateWorker): Promise<{ id: string } | null> {
    if (!WORKER_NAME.test(command.name)) {
      throw new ValidationError('invalid worker', [{ path: 'name', message: `must match ${WORKER_NAME.source}` }]);
    }
    const id = newId();
    const inserted = await client.query(
      `INSERT INTO intake.workers (id, workspace_id, name, description) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id, name) DO NOTHING`,
      [id, command.workspaceId, command.name, command.description],
    );
    if (inserted.rowCount === 0) return null;
    await this.store.append(
      Streams.worker(id),
      'no_stream',
      [{ type: 'worker.created', data: { workerId: id, name: command.name, description: command.description }, actor: command.actor }],
      { workspaceId: command.workspaceId, client },
    );
    return { id };
  }
}
