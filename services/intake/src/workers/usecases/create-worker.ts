import { Injectable } from '@nestjs/common';
import { ValidationError, type ActorRef } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
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
  ) {}

  async execute(command: CreateWorker): Promise<{ id: string }> {
    if (!WORKER_NAME.test(command.name)) {
      throw new ValidationError('invalid worker', [{ path: 'name', message: `must match ${WORKER_NAME.source}` }]);
    }
    const id = newId();
    return this.store.transaction(async (client) => {
      const inserted = await client.query(
        `INSERT INTO intake.workers (id, workspace_id, name, description) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workspace_id, name) DO NOTHING`,
        [id, command.workspaceId, command.name, command.description],
      );
      if (inserted.rowCount === 0) throw new WorkerNameTakenError(command.name);
      await this.store.append(
        Streams.worker(id),
        'no_stream',
        [{ type: 'worker.created', data: { workerId: id, name: command.name, description: command.description }, actor: command.actor }],
        { workspaceId: command.workspaceId, client },
      );
      return { id };
    });
  }
}
