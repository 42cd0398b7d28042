import { Injectable } from '@nestjs/common';
import { IdentityEventTypes, roleWithin } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import type { WorkspacePrincipal } from '../../../access/principal';
import { NotFoundError, RoleCeilingExceededError } from '../../../identity/errors';
import { appendAudit, lockWorkspace } from '../../../identity/persistence';
import { issueApiKey } from '../../api-key';
import type { CreateApiKeyCommand, CreatedApiKey } from './create-api-key.command';

/** A new API key bound to the caller's workspace, with a role no higher than the caller's. */
@Injectable()
export class CreateApiKey {
  constructor(
    private readonly store: PostgresEventStore,
  ) {}

  async execute(principal: WorkspacePrincipal, command: CreateApiKeyCommand): Promise<CreatedApiKey> {
    if (!roleWithin(command.role, principal.role)) {
      throw new RoleCeilingExceededError(`a ${principal.role} cannot create a key with the ${command.role} role`);
    }
    const workspaceId = principal.workspaceId;
    const key = issueApiKey();
    const expiresAt = command.expiresAt ? new Date(command.expiresAt).toISOString() : null;
    await this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      await client.query(
        `INSERT INTO identity.api_keys (id, workspace_id, role, name, secret_hash, prefix, expires_at, created_by_kind, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [key.id, workspaceId, command.role, command.name, key.secretHash, key.displayPrefix, expiresAt, principal.kind, principal.id],
      );
      await appendAudit(this.store, client, workspaceId, principal.actor, [
        { type: IdentityEventTypes.apiKeyCreated, data: { workspaceId, apiKeyId: key.id, name: command.name, role: command.role, expiresAt } },
      ]);
    });
    return { id: key.id, secret: key.token, name: command.name, role: command.role, expiresAt };
  }
}
