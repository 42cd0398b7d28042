import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { PG_POOL } from '@packetagent/eventstore';
import { LoginThrottle } from '../../../sessions/login-throttle';
import { CeremonyChallenges, CEREMONY_TTL_SECONDS } from '../../ceremony-challenges';
import { DecoyCredentials } from '../../decoy-credentials';
import type { AuthenticationOptions, StartPasskeyLoginCommand } from '../../passkeys.dto';
import { RelyingParty } from '../../relying-party';

/**
 * Options for signing in with a passkey. Without an address any passkey of this site may
 * answer (the browser offers those it holds); with one, only that account's, and an address
 * without passkeys gets a stand-in so the answer looks the same. Throttled like a password login.
 */
@Injectable()
export class StartPasskeyLogin {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly relyingParty: RelyingParty,
    private readonly challenges: CeremonyChallenges,
    private readonly decoys: DecoyCredentials,
    private readonly throttle: LoginThrottle,
  ) {}

  async execute(command: StartPasskeyLoginCommand, clientIp: string): Promise<z.output<typeof AuthenticationOptions>> {
    const rp = this.relyingParty.get();
    const email = command.email ?? null;
    let userId: string | null = null;
    let allowCredentials: { id: string; transports: string[] }[] = [];
    if (email === null) {
      await this.throttle.assertClientAllowed(clientIp);
    } else {
      await this.throttle.assertLoginAllowed(email, clientIp);
      const { rows } = await this.pool.query<{ user_id: string; credential_id: string | null; transports: string[] | null }>(
        `SELECT u.id AS user_id, p.credential_id, p.transports FROM identity.users u
           LEFT JOIN identity.passkeys p ON p.user_id = u.id WHERE u.email = $1 ORDER BY p.created_at`,
        [email],
      );
      // An unknown address: a user id that matches no one, so whatever answers is refused.
      userId = rows[0]?.user_id ?? randomUUID();
      allowCredentials = rows.flatMap((row) => (row.credential_id ? [{ id: row.credential_id, transports: row.transports ?? [] }] : []));
      if (allowCredentials.length === 0) allowCredentials = [await this.decoys.for(email)];
    }
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      allowCredentials,
      userVerification: 'required',
      timeout: CEREMONY_TTL_SECONDS * 1000,
    });
    await this.challenges.remember(options.challenge, { purpose: 'authentication', userId, email });
    return options;
  }
}
