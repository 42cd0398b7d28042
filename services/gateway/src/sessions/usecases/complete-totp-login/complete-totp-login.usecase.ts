import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { ConflictError, InvalidTotpCodeError, UnauthenticatedError } from '../../../identity/errors';
import { SecondFactor } from '../../second-factor';
import { SessionStore, type NewSession } from '../../session.store';
import type { CompleteTotpLoginCommand } from './complete-totp-login.command';

/** Completes a pending login with a TOTP or recovery code; the session id is replaced. */
@Injectable()
export class CompleteTotpLogin {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly sessions: SessionStore,
    private readonly secondFactor: SecondFactor,
  ) {}

  async execute(sessionId: string, command: CompleteTotpLoginCommand): Promise<NewSession> {
    const session = await this.sessions.get(sessionId);
    if (!session) throw new UnauthenticatedError('the session has ended; sign in again');
    if (!session.pendingTotp) throw new ConflictError('this session is not waiting for a second factor');
    const { rows } = await this.pool.query<{ totp_secret: string | null; totp_enabled: boolean }>(
      `SELECT totp_secret, totp_enabled FROM identity.users WHERE id = $1`,
      [session.userId],
    );
    const user = rows[0];
    if (!user?.totp_enabled || !user.totp_secret) throw new ConflictError('this account has no second factor');
    if (!(await this.secondFactor.checkTotpOrRecoveryCode(session.userId, user.totp_secret, command.code))) throw new InvalidTotpCodeError();
    return this.sessions.promote(sessionId, session.userId);
  }
}
