import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PacketAdeEventTypes, type ActorOperation } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { WorkspacePrincipal } from '../../access/principal';
import { NotFoundError } from '../../identity/errors';
import { appendAudit, lockWorkspace } from '../../identity/persistence';
import { issueActorToken } from './actor-token';
import type { ActorTokenList, IssueActorTokenCommand, IssuedActorToken } from './actor-tokens.dto';

interface Row {
  id: string;
  actor_name: string;
  operations: ActorOperation[];
  prefix: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const TOKEN_ID = /^[a-f0-9]{20}$/;

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Issues, lists and revokes the workspace's actor tokens; each change audited on the workspace stream. */
@Injectable()
export class ActorTokens {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  async issue(principal: WorkspacePrincipal, command: IssueActorTokenCommand): Promise<IssuedActorToken> {
    const workspaceId = principal.workspaceId;
    const token = issueActorToken();
    const expiresAt = new Date(command.expiresAt).toISOString();
    await this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      await client.query(
        `INSERT INTO identity.actor_tokens (id, workspace_id, actor_name, operations, secret_hash, prefix, expires_at, created_by_kind, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [token.id, workspaceId, command.actorName, command.operations, token.secretHash, token.displayPrefix, expiresAt, principal.kind, principal.id],
      );
      await appendAudit(this.store, client, workspaceId, principal.actor, [
        {
          type: PacketAdeEventTypes.actorTokenIssued,
          data: { workspaceId, tokenId: token.id, actorName: command.actorName, operations: command.operations, expiresAt },
        },
      ]);
    });
    return { id: token.id, token: token.token, actorName: command.actorName, operations: command.operations, expiresAt };
  }

  async list(workspaceId: string): Promise<ActorTokenList> {
    const { rows } = await this.pool.query<Row>(
      `SELECT id, actor_name, operations, prefix, created_at, expires_at, revoked_at, last_used_at
         FROM identity.actor_tokens WHERE workspace_id = $1 ORDER BY created_at DESC, id`,
      [workspaceId],
    );
    return {
      items: rows.map((row) => ({
        id: row.id,
        actorName: row.actor_name,
        operations: row.operations,
        prefix: row.prefix,
        createdAt: row.created_at.toISOString(),
        expiresAt: row.expires_at.toISOString(),
        revokedAt: iso(row.revoked_at),
        lastUsedAt: iso(row.last_used_at),
      })),
    };
  }

  /** Stops the token at once; revoking again changes nothing. What the actor deployed stays. */
  async revoke(principal: WorkspacePrincipal, tokenId: string): Promise<void> {
    const workspaceId = principal.workspaceId;
    if (!TOKEN_ID.test(tokenId)) throw new NotFoundError('no such actor token in this workspace');
    await this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      const { rows } = await client.query<{ actor_name: string; revoked: boolean }>(
        `SELECT actor_name, revoked_at IS NOT NULL AS revoked FROM identity.actor_tokens WHERE id = $1 AND workspace_id = $2`,
        [tokenId, workspaceId],
      );
      const token = rows[0];
      if (!token) throw new NotFoundError('no such actor token in this workspace');
      if (token.revoked) return;
      await client.query(`UPDATE identity.actor_tokens SET revoked_at = now() WHERE id = $1`, [tokenId]);
      await appendAudit(this.store, client, workspaceId, principal.actor, [
        { type: PacketAdeEventTypes.actorTokenRevoked, data: { workspaceId, tokenId, actorName: token.actor_name } },
      ]);
    });
  }
}
