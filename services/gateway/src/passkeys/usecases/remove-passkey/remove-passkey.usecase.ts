import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { RecentAuthentication } from '../../../sessions/recent-authentication';
import { PasskeyNotFoundError } from '../../passkey.errors';
import { isPasskeyId } from '../../passkey.rows';

/**
 * Removes one of the caller's passkeys: it no longer signs anyone in. Needs a recent
 * authentication, like adding one. The password stays, so no one is locked out by this.
 */
@Injectable()
export class RemovePasskey {
  private readonly logger = new Logger('passkeys');

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly recent: RecentAuthentication,
  ) {}

  async execute(userId: string, sessionId: string | null, passkeyId: string): Promise<void> {
    await this.recent.assert(sessionId, userId);
    if (!isPasskeyId(passkeyId)) throw new PasskeyNotFoundError();
    const { rowCount } = await this.pool.query(`DELETE FROM identity.passkeys WHERE id = $1 AND user_id = $2`, [passkeyId, userId]);
    if (rowCount !== 1) throw new PasskeyNotFoundError();
    this.logger.log(`passkey ${passkeyId} removed by user ${userId}`);
  }
}
