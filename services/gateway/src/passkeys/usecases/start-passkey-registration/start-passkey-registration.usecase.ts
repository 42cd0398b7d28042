import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { generateRegistrationOptions } from '@simplewebauthn/server';
import { PG_POOL } from '@packetagent/eventstore';
import { UnauthenticatedError } from '../../../identity/errors';
import { RecentAuthentication } from '../../../sessions/recent-authentication';
import { CeremonyChallenges, CEREMONY_TTL_SECONDS } from '../../ceremony-challenges';
import { passkeysOf } from '../../passkey.rows';
import type { RegistrationOptions } from '../../passkeys.dto';
import { RelyingParty } from '../../relying-party';
import type { z } from 'zod';

/**
 * Options for adding a passkey: a discoverable credential with user verification, none of the
 * user's registered authenticators again. The challenge is remembered for this user only.
 */
@Injectable()
export class StartPasskeyRegistration {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly relyingParty: RelyingParty,
    private readonly challenges: CeremonyChallenges,
    private readonly recent: RecentAuthentication,
  ) {}

  async execute(userId: string, sessionId: string | null): Promise<z.output<typeof RegistrationOptions>> {
    const rp = this.relyingParty.get();
    await this.recent.assert(sessionId, userId);
    const { rows } = await this.pool.query<{ email: string }>(`SELECT email FROM identity.users WHERE id = $1`, [userId]);
    const user = rows[0];
    if (!user) throw new UnauthenticatedError('the account no longer exists');
    const existing = await passkeysOf(this.pool, userId);
    const options = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      // The user handle is the account id: stable, and no personal data on the authenticator.
      userID: new TextEncoder().encode(userId),
      userName: user.email,
      userDisplayName: user.email,
      timeout: CEREMONY_TTL_SECONDS * 1000,
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.credential_id, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      extensions: { credProps: true },
      // ES256 and RS256 (EdDSA is rare among passkey providers and left out).
      supportedAlgorithmIDs: [-7, -257],
    });
    await this.challenges.remember(options.challenge, { purpose: 'registration', userId });
    return options;
  }
}
