import { Injectable } from '@nestjs/common';
import { IdentityEventTypes } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { appendUserAudit } from '../../../identity/persistence';
import { RecentAuthentication } from '../../../sessions/recent-authentication';
import { PasskeyNotFoundError } from '../../passkey.errors';
import { isPasskeyId } from '../../passkey.rows';

/**
 * Removes one of the caller's passkeys: it no longer signs anyone in. Needs a recent
 * authentication, like adding one. The password stays, so no one is locked out by this.
 * Recorded as `user.passkey_removed` in each of the user's workspaces.
 */
@Injectable()
export class RemovePasskey {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly recent: RecentAuthentication,
  ) {}

  async execute(userId: string, sessionId: string | null, passkeyId: string): Promise<void> {
    await this.recent.assert(sessionId, userId);
    if (!isPasskeyId(passkeyId)) throw new PasskeyNotFoundError();
    await this.store.transaction(async (client) => {
      const { rowCount } = await client.query(`DELETE FROM identity.passkeys WHERE id = $1 AND user_id = $2`, [passkeyId, userId]);
      if (rowCount !== 1) throw new PasskeyNotFoundError();
      await appendUserAudit(this.store, client, userId, { kind: 'user', id: userId }, [{ type: IdentityEventTypes.userPasskeyRemoved, data: { userId, passkeyId } }]);
    });
  }
}
