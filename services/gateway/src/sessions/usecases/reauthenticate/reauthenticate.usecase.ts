import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { ValidationError } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { UnauthenticatedError } from '../../../identity/errors';
import { verifyPassword } from '../../../identity/passwords';
import { LoginThrottle } from '../../login-throttle';
import { RECENT_AUTHENTICATION_SECONDS } from '../../recent-authentication';
import { SecondFactor } from '../../second-factor';
import { SessionStore } from '../../session.store';
import type { ReauthenticateCommand, ReauthenticateResult } from './reauthenticate.command';
import type { z } from 'zod';

interface UserRow {
  email: string;
  password_hash: string;
  totp_secret: string | null;
  totp_enabled: boolean;
}

/**
 * The signed-in user proves who they are again (password, and the second factor when the
 * account has one), so the session may change sign-in methods for a while. Wrong answers are
 * 400s naming the field, not 401s: the session itself is still good. They count towards the
 * same throttle as a failed sign-in.
 */
@Injectable()
export class Reauthenticate {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly sessions: SessionStore,
    private readonly throttle: LoginThrottle,
    private readonly secondFactor: SecondFactor,
  ) {}

  async execute(sessionId: string, command: ReauthenticateCommand, clientIp: string): Promise<z.output<typeof ReauthenticateResult>> {
    const session = await this.sessions.get(sessionId);
    if (!session || session.pendingTotp) throw new UnauthenticatedError('the session has ended; sign in again');
    const { rows } = await this.pool.query<UserRow>(
      `SELECT email, password_hash, totp_secret, totp_enabled FROM identity.users WHERE id = $1`,
      [session.userId],
    );
    const user = rows[0];
    if (!user) throw new UnauthenticatedError('the account no longer exists');
    await this.throttle.assertLoginAllowed(user.email, clientIp);
    if (!(await verifyPassword(user.password_hash, command.password))) {
      await this.throttle.loginFailed(user.email, clientIp);
      throw new ValidationError('the password is not correct', [{ path: 'password', message: 'is not correct' }]);
    }
    if (user.totp_enabled && user.totp_secret) {
      if (!command.code) throw new ValidationError('the second factor is missing', [{ path: 'code', message: 'this account has a second factor: give its code' }]);
      if (!(await this.secondFactor.checkTotpOrRecoveryCode(session.userId, user.totp_secret, command.code))) {
        throw new ValidationError('the code is not valid', [{ path: 'code', message: 'is not valid' }]);
      }
    }
    await this.throttle.loginSucceeded(user.email);
    const at = new Date();
    await this.sessions.markAuthenticated(sessionId, session, at);
    return { authenticatedAt: at.toISOString(), validForSeconds: RECENT_AUTHENTICATION_SECONDS };
  }
}
