import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import type { ActorOperation } from '@packetagent/contracts';
import { UnauthenticatedError } from '../../identity/errors';
import { sameDigest, sha256 } from '../../identity/secrets';
import { looksLikeActorToken, parseActorToken } from './actor-token';

const BEARER = /^Bearer +(\S+)$/i;
import type { ActorPrincipal } from './actor-principal';

export class ActorTokenInvalidError extends UnauthenticatedError {
  override readonly code = 'actor_token_invalid';
}

interface TokenRow {
  workspace_id: string;
  actor_name: string;
  operations: ActorOperation[];
  secret_hash: Buffer;
  expired: boolean;
  revoked: boolean;
  stale: boolean;
}

const NO_SUCH_TOKEN = sha256('no such actor token');

/** Resolves a presented actor token to its workspace, actor and operations, or refuses it (401). */
@Injectable()
export class ActorTokenAuthenticator {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** From an `Authorization` header (or gRPC metadata) value: "Bearer pade_<id>_<secret>". */
  fromAuthorization(authorization: unknown): Promise<ActorPrincipal> {
    const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token || !looksLikeActorToken(token)) {
      return Promise.reject(new ActorTokenInvalidError('this operation takes a PacketADE actor token: "Authorization: Bearer pade_<id>_<secret>"'));
    }
    return this.authenticate(token);
  }

  async authenticate(token: string): Promise<ActorPrincipal> {
    const parsed = parseActorToken(token);
    if (!parsed) throw new ActorTokenInvalidError('the actor token is not valid');
    const { rows } = await this.pool.query<TokenRow>(
      `SELECT workspace_id, actor_name, operations, secret_hash,
              expires_at <= now() AS expired,
              revoked_at IS NOT NULL AS revoked,
              (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') AS stale
         FROM identity.actor_tokens WHERE id = $1`,
      [parsed.id],
    );
    const row = rows[0];
    const matches = sameDigest(sha256(parsed.secret), row?.secret_hash ?? NO_SUCH_TOKEN);
    if (!row || !matches) throw new ActorTokenInvalidError('the actor token is not valid');
    if (row.revoked) throw new ActorTokenInvalidError('the actor token has been revoked');
    if (row.expired) throw new ActorTokenInvalidError('the actor token has expired');
    if (row.stale) {
      await this.pool.query(
        `UPDATE identity.actor_tokens SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [parsed.id],
      );
    }
    return {
      tokenId: parsed.id,
      workspaceId: row.workspace_id,
      actorName: row.actor_name,
      operations: row.operations,
      actor: { kind: 'actor_token', id: parsed.id },
    };
  }
}
