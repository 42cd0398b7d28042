import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { verifyRegistrationResponse, type VerifiedRegistrationResponse } from '@simplewebauthn/server';
import { IdentityEventTypes, ValidationError } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { appendUserAudit } from '../../../identity/persistence';
import { RecentAuthentication } from '../../../sessions/recent-authentication';
import { answeredChallenge, CeremonyChallenges } from '../../ceremony-challenges';
import { PasskeyAlreadyExistsError } from '../../passkey.errors';
import { passkeyOf, toPasskeyView } from '../../passkey.rows';
import type { PasskeyView, RegisterPasskeyCommand } from '../../passkeys.dto';
import { RelyingParty } from '../../relying-party';

const UNIQUE_VIOLATION = '23505';

function refused(message: string): ValidationError {
  return new ValidationError('the passkey could not be registered', [{ path: 'response', message }]);
}

/**
 * Verifies the browser's answer to the registration options (challenge of this user, once;
 * the configured origin and RP id; user verification) and stores the credential, recorded as
 * `user.passkey_added` in each of the user's workspaces in the same transaction.
 */
@Injectable()
export class RegisterPasskey {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly relyingParty: RelyingParty,
    private readonly challenges: CeremonyChallenges,
    private readonly recent: RecentAuthentication,
  ) {}

  async execute(userId: string, sessionId: string | null, command: RegisterPasskeyCommand): Promise<PasskeyView> {
    const rp = this.relyingParty.get();
    await this.recent.assert(sessionId, userId);
    const challenge = answeredChallenge(command.response.response.clientDataJSON);
    const ceremony = challenge ? await this.challenges.take(challenge) : null;
    if (!challenge || ceremony?.purpose !== 'registration' || ceremony.userId !== userId) {
      throw refused('the challenge is unknown, used or expired; ask for new options');
    }
    let verification: VerifiedRegistrationResponse;
    try {
      verification = await verifyRegistrationResponse({
        response: command.response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: true,
        supportedAlgorithmIDs: [-7, -257],
      });
    } catch (error) {
      // The library's message says which check failed (origin, RP id, flags); it holds no secret.
      throw refused(error instanceof Error ? error.message : 'the response is not valid');
    }
    if (!verification.verified) throw refused('the response is not valid');
    const { credential, credentialDeviceType, credentialBackedUp } = verification.registrationInfo;
    const id = uuidv7();
    try {
      await this.store.transaction(async (client) => {
        await client.query(
          `INSERT INTO identity.passkeys (id, user_id, credential_id, public_key, counter, transports, name, device_type, backed_up)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [id, userId, credential.id, Buffer.from(credential.publicKey), credential.counter, credential.transports ?? [], command.name, credentialDeviceType, credentialBackedUp],
        );
        await appendUserAudit(this.store, client, userId, { kind: 'user', id: userId }, [{ type: IdentityEventTypes.userPasskeyAdded, data: { userId, passkeyId: id } }]);
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) throw new PasskeyAlreadyExistsError();
      throw error;
    }
    const row = await passkeyOf(this.pool, userId, id);
    if (!row) throw new Error(`passkey ${id} vanished after it was stored`);
    return toPasskeyView(row);
  }
}
