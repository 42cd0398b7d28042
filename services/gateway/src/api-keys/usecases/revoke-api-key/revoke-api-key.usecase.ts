import { Injectable } from '@nestjs/common';
import { IdentityEventTypes, roleWithin, type Role } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import type { WorkspacePrincipal } from '../../../access/principal';
import { NotFoundError, RoleCeilingExceededError } from '../../../identity/errors';
import { appendAudit, lockWorkspace } from '../../../identity/persistence';

/**
 * Revokes a key of the caller's workspace; it stops working at once. Revoking again changes
 * nothing. Nobody revokes a key whose role is above their own.
 */
@Injectable()
export class RevokeApiKey {
  constructor(
    private readonly store: PostgresEventStore,
  ) {}

  async execute(principal: WorkspacePrincipal, apiKeyId: string): Promise<void> {
    const workspaceId = principal.workspaceId;
    await this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      const { rows } = await client.query<{ role: Role; revoked: boolean }>(
        `SELECT role, revoked_at IS NOT NULL AS revoked FROM identity.api_keys WHERE id = $1 AND workspace_id = $2`,
        [apiKeyId, workspaceId],
      );
      const key = rows[0];
      if (!key) throw new NotFoundError('no such API key in this workspace');
      if (!roleWithin(key.role, principal.role)) throw new RoleCeilingExceededError(`a ${principal.role} cannot revoke a key with the ${key.role} role`);
      if (key.revoked) return;
      await client.query(`UPDATE identity.api_keys SET revoked_at = now() WHERE id = $1`, [apiKeyId]);
      await appendAudit(this.store, client, workspaceId, principal.actor, [{ type: IdentityEventTypes.apiKeyRevoked, data: { workspaceId, apiKeyId } }]);
    });
  }
}
