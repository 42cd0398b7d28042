import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Pool } from 'pg';
import { verifyAuthenticationResponse, type VerifiedAuthenticationResponse } from '@simplewebauthn/server';
import { IdentityEventTypes } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { PasskeyNotAcceptedError } from '../../../identity/errors';
import { appendUserAudit } from '../../../identity/persistence';
import { LoginThrottle } from '../../../sessions/login-throttle';
import { SessionStore, type NewSession } from '../../../sessions/session.store';
import { answeredChallenge, CeremonyChallenges } from '../../ceremony-challenges';
import { passkeyByCredentialId, type PasskeyRow } from '../../passkey.rows';
import type { FinishPasskeyLoginCommand } from '../../passkeys.dto';
import { RelyingParty } from '../../relying-party';

/**
 * Verifies a passkey sign-in and opens the same session a password and second factor would:
 * the passkey is something the person has, and its required user verification (PIN or
 * biometric on the authenticator) the second factor. Every refusal looks alike to the caller,
 * counts towards the login throttle and is logged with its reason; a signature counter that
 * did not move forward is also recorded against the passkey and, as
 * `user.passkey_counter_regressed`, in each of its user's workspaces.
 */
@Injectable()
export class FinishPasskeyLogin {
  private readonly logger = new Logger('auth');

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly relyingParty: RelyingParty,
    private readonly challenges: CeremonyChallenges,
    private readonly sessions: SessionStore,
    private readonly throttle: LoginThrottle,
  ) {}

  async execute(command: FinishPasskeyLoginCommand, clientIp: string, previousSessionId: string | null): Promise<NewSession> {
    const rp = this.relyingParty.get();
    const { response } = command;
    const challenge = answeredChallenge(response.response.clientDataJSON);
    const ceremony = challenge ? await this.challenges.take(challenge) : null;
    if (!challenge || ceremony?.purpose !== 'authentication') {
      await this.throttle.assertClientAllowed(clientIp);
      return this.refuse(null, clientIp, 'the challenge is unknown, used or expired');
    }
    if (ceremony.email) await this.throttle.assertLoginAllowed(ceremony.email, clientIp);
    else await this.throttle.assertClientAllowed(clientIp);

    const passkey = await passkeyByCredentialId(this.pool, response.id);
    if (!passkey) return this.refuse(ceremony.email, clientIp, 'no passkey has this credential id');
    if (ceremony.userId !== null && passkey.user_id !== ceremony.userId) return this.refuse(ceremony.email, clientIp, `passkey ${passkey.id} is not of the account the sign-in named`);
    const userHandle = response.response.userHandle;
    if (userHandle !== undefined && Buffer.from(userHandle, 'base64url').toString('utf8') !== passkey.user_id) {
      return this.refuse(ceremony.email, clientIp, `passkey ${passkey.id} answered with another user handle`);
    }
    const email = ceremony.email ?? (await this.emailOf(passkey.user_id));
    if (!ceremony.email && email) await this.throttle.assertLoginAllowed(email, clientIp);

    let verification: VerifiedAuthenticationResponse;
    try {
      verification = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        // The counter is compared below instead, so that a regression can be recorded as one.
        credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter: 0, transports: passkey.transports },
        requireUserVerification: true,
      });
    } catch (error) {
      return this.refuse(email, clientIp, `passkey ${passkey.id}: ${error instanceof Error ? error.message : 'not verified'}`);
    }
    if (!verification.verified || !verification.authenticationInfo.userVerified) return this.refuse(email, clientIp, `passkey ${passkey.id} was not verified`);

    const presented = verification.authenticationInfo.newCounter;
    if (!(await this.advanceCounter(passkey, presented, verification.authenticationInfo.credentialBackedUp))) {
      await this.recordRegression(passkey, presented);
      this.logger.warn(`passkey ${passkey.id} of user ${passkey.user_id} presented counter ${presented}, not above the stored one: refused as a possible copy`);
      return this.refuse(email, clientIp, `passkey ${passkey.id}: the signature counter went backwards`);
    }

    if (email) await this.throttle.loginSucceeded(email);
    if (previousSessionId) await this.sessions.delete(previousSessionId);
    const session = await this.sessions.create(passkey.user_id, false);
    this.logger.log(`user ${passkey.user_id} signed in with passkey ${passkey.id}`);
    return session;
  }

  /**
   * Moves the stored counter to the presented one, in one statement so two concurrent uses of
   * a copied credential cannot both pass. Authenticators that do not count always present 0.
   */
  private async advanceCounter(passkey: PasskeyRow, presented: number, backedUp: boolean): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE identity.passkeys SET counter = $2, backed_up = $3, last_used_at = now()
        WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))`,
      [passkey.id, presented, backedUp],
    );
    return rowCount === 1;
  }

  /** The gateway, not the presenter, is the actor: whoever holds the copy is not known. */
  private async recordRegression(passkey: PasskeyRow, presented: number): Promise<void> {
    await this.store.transaction(async (client) => {
      const { rows } = await client.query<{ stored: string }>(
        `INSERT INTO identity.passkey_counter_regressions (passkey_id, stored_counter, presented_counter)
         SELECT id, counter, $2 FROM identity.passkeys WHERE id = $1
         RETURNING stored_counter AS stored`,
        [passkey.id, presented],
      );
      if (rows.length === 0) return;
      const data = { userId: passkey.user_id, passkeyId: passkey.id, storedCounter: Number(rows[0]!.stored), presentedCounter: presented };
      await appendUserAudit(this.store, client, passkey.user_id, { kind: 'system', id: 'gateway' }, [{ type: IdentityEventTypes.userPasskeyCounterRegressed, data }]);
    });
  }

  private async emailOf(userId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ email: string }>(`SELECT email FROM identity.users WHERE id = $1`, [userId]);
    return rows[0]?.email ?? null;
  }

  private async refuse(email: string | null, clientIp: string, reason: string): Promise<never> {
    this.logger.warn(`passkey sign-in refused: ${reason}`);
    await (email ? this.throttle.loginFailed(email, clientIp) : this.throttle.clientFailed(clientIp));
    throw new PasskeyNotAcceptedError();
  }
}
