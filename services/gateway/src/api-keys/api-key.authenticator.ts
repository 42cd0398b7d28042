import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import type { Role } from '@packetagent/contracts';
import { ApiKeyInvalidError } from '../identity/errors';
import { sameDigest, sha256 } from '../identity/secrets';
import { parseApiKey } from './api-key';

export interface AuthenticatedApiKey {
  id: string;
  workspaceId: string;
  role: Role;
}

interface KeyRow {
  workspace_id: string;
  role: Role;
  secret_hash: Buffer;
  expired: boolean;
  revoked: boolean;
  stale: boolean;
}

// Compared against when the id is unknown, so an unknown id costs what a wrong secret costs.
const NO_SUCH_KEY = sha256('no such key');

/** Resolves a presented API key to its workspace and role, or refuses it with 401. */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async authenticate(token: string): Promise<AuthenticatedApiKey> {
    const parsed = parseApiKey(token);
    if (!parsed) throw new ApiKeyInvalidError('the API key is not valid');
    const { rows } = await this.pool.query<KeyRow>(
      `SELECT workspace_id, role, secret_hash,
              (expires_at IS NOT NULL AND expires_at <= now()) AS expired,
              (revoked_at IS NOT NULL) AS revoked,
              (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') AS stale
         FROM identity.api_keys WHERE id = $1`,
      [parsed.id],
    );
    const row = rows[0];
    const matches = sameDigest(sha256(parsed.secret), row?.secret_hash ?? NO_SUCH_KEY);
    if (!row || !matches) throw new ApiKeyInvalidError('the API key is not valid');
    // Only the holder of the secret gets this far, so telling why is safe and helpful.
    if (row.revoked) throw new ApiKeyInvalidError('the API key has been revoked');
    if (row.expired) throw new ApiKeyInvalidError('the API key has expired');
    // At most one write a minute per key, and no second round trip otherwise: a busy key must
    // not turn every request into a write.
    if (row.stale) {
      await this.pool.query(
        `UPDATE identity.api_keys SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [parsed.id],
      );
    }
    return { id: parsed.id, workspaceId: row.workspace_id, role: row.role };
  }
}
