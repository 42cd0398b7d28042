import { rm } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { IdentityEventTypes } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { issueApiKey } from '../../../api-keys/api-key';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../../../gateway.options';
import { ConflictError, InvalidSetupTokenError, SetupCompletedError } from '../../../identity/errors';
import { hashPassword } from '../../../identity/passwords';
import { appendAudit, newWorkspaceId } from '../../../identity/persistence';
import { sameDigest, sha256 } from '../../../identity/secrets';
import { setupTokenPath } from '../../setup-token.issuer';
import type { CompleteSetupCommand } from './complete-setup.command';

interface SetupRow {
  token_hash: Buffer;
  consumed_at: Date | null;
}

/**
 * Creates the owner, the first workspace, the membership and an owner API key, and consumes the
 * setup token, all in one transaction with their audit events; the token file goes after commit.
 */
@Injectable()
export class CompleteSetup {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
  ) {}

  async execute(command: CompleteSetupCommand): Promise<{ workspaceId: string; apiKey: string }> {
    const tokenHash = sha256(command.token);
    // Checked before the password is hashed, so a caller without the token costs nothing.
    await this.checkToken(this.pool, tokenHash, false);
    const passwordHash = await hashPassword(command.password);
    const result = await this.store.transaction(async (client) => {
      await this.checkToken(client, tokenHash, true);
      const userId = uuidv7();
      const workspaceId = newWorkspaceId();
      const key = issueApiKey();
      const inserted = await client.query(
        `INSERT INTO identity.users (id, email, password_hash) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING`,
        [userId, command.email, passwordHash],
      );
      if (inserted.rowCount !== 1) throw new ConflictError('a user with this e-mail address already exists');
      await client.query(`INSERT INTO identity.workspaces (id, name) VALUES ($1, $2)`, [workspaceId, command.workspace]);
      await client.query(`INSERT INTO identity.memberships (user_id, workspace_id, role) VALUES ($1, $2, 'owner')`, [userId, workspaceId]);
      const keyName = 'owner key (setup)';
      await client.query(
        `INSERT INTO identity.api_keys (id, workspace_id, role, name, secret_hash, prefix, created_by_kind, created_by)
         VALUES ($1, $2, 'owner', $3, $4, $5, 'user', $6)`,
        [key.id, workspaceId, keyName, key.secretHash, key.displayPrefix, userId],
      );
      await client.query(`UPDATE identity.setup SET consumed_at = now() WHERE singleton`);
      await appendAudit(
        this.store,
        client,
        workspaceId,
        { kind: 'user', id: userId },
        [
          { type: IdentityEventTypes.workspaceCreated, data: { workspaceId, name: command.workspace, createdBy: userId } },
          { type: IdentityEventTypes.memberAdded, data: { workspaceId, userId, role: 'owner' } },
          { type: IdentityEventTypes.apiKeyCreated, data: { workspaceId, apiKeyId: key.id, name: keyName, role: 'owner', expiresAt: null } },
          { type: IdentityEventTypes.setupCompleted, data: { workspaceId, ownerUserId: userId } },
        ],
        'no_stream',
      );
      return { workspaceId, apiKey: key.token };
    });
    await rm(setupTokenPath(this.options), { force: true });
    return result;
  }

  private async checkToken(db: Pool | PoolClient, tokenHash: Buffer, lock: boolean): Promise<void> {
    const { rows } = await db.query<SetupRow>(`SELECT token_hash, consumed_at FROM identity.setup WHERE singleton${lock ? ' FOR UPDATE' : ''}`);
    const setup = rows[0];
    if (!setup || setup.consumed_at) throw new SetupCompletedError();
    const owners = await db.query(`SELECT 1 FROM identity.memberships WHERE role = 'owner' LIMIT 1`);
    if (owners.rowCount) throw new SetupCompletedError();
    if (!sameDigest(tokenHash, setup.token_hash)) throw new InvalidSetupTokenError();
  }
}
