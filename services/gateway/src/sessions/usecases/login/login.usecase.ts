import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { InvalidCredentialsError } from '../../../identity/errors';
import { unknownUserHash, verifyPassword } from '../../../identity/passwords';
import { LoginThrottle } from '../../login-throttle';
import { SessionStore, type NewSession } from '../../session.store';
import type { LoginCommand } from './login.command';

interface UserRow {
  id: string;
  password_hash: string;
  totp_enabled: boolean;
}

/**
 * Password sign-in. A wrong password and an unknown address fail alike: same error, and an
 * argon2 verification either way. With TOTP enabled the session starts pending.
 */
@Injectable()
export class Login implements OnApplicationBootstrap {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly sessions: SessionStore,
    private readonly throttle: LoginThrottle,
  ) {}

  /** The stand-in hash is made before the first login, so that login does not take longer. */
  async onApplicationBootstrap(): Promise<void> {
    await unknownUserHash();
  }

  async execute(command: LoginCommand, clientIp: string): Promise<{ session: NewSession; totpRequired: boolean }> {
    await this.throttle.assertLoginAllowed(command.email, clientIp);
    const { rows } = await this.pool.query<UserRow>(`SELECT id, password_hash, totp_enabled FROM identity.users WHERE email = $1`, [command.email]);
    const user = rows[0];
    const passwordMatches = await verifyPassword(user?.password_hash ?? (await unknownUserHash()), command.password);
    if (!user || !passwordMatches) {
      await this.throttle.loginFailed(command.email, clientIp);
      throw new InvalidCredentialsError();
    }
    await this.throttle.loginSucceeded(command.email);
    const session = await this.sessions.create(user.id, user.totp_enabled);
    return { session, totpRequired: user.totp_enabled };
  }
}
