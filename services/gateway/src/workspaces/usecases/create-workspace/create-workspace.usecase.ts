import { Injectable } from '@nestjs/common';
import { IdentityEventTypes } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import type { Principal } from '../../../access/principal';
import { appendAudit, newWorkspaceId } from '../../../identity/persistence';
import type { CreateWorkspaceCommand } from './create-workspace.command';

/** A new workspace whose owner is the signed-in user who asked for it. */
@Injectable()
export class CreateWorkspace {
  constructor(
    private readonly store: PostgresEventStore,
  ) {}

  async execute(principal: Principal, command: CreateWorkspaceCommand): Promise<{ id: string }> {
    const workspaceId = newWorkspaceId();
    const userId = principal.id;
    await this.store.transaction(async (client) => {
      await client.query(`INSERT INTO identity.workspaces (id, name) VALUES ($1, $2)`, [workspaceId, command.name]);
      await client.query(`INSERT INTO identity.memberships (user_id, workspace_id, role) VALUES ($1, $2, 'owner')`, [userId, workspaceId]);
      await appendAudit(
        this.store,
        client,
        workspaceId,
        principal.actor,
        [
          { type: IdentityEventTypes.workspaceCreated, data: { workspaceId, name: command.name, createdBy: userId } },
          { type: IdentityEventTypes.memberAdded, data: { workspaceId, userId, role: 'owner' } },
        ],
        'no_stream',
      );
    });
    return { id: workspaceId };
  }
}
