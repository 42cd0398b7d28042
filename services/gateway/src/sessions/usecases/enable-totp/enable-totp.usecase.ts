import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { IdentityEventTypes, ValidationError } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { ConflictError } from '../../../identity/errors';
import { appendUserAudit } from '../../../identity/persistence';
import { newRecoveryCode, RECOVERY_CODE_COUNT, recoveryCodeHash } from '../../recovery-codes';
import { SecondFactor } from '../../second-factor';
import type { EnableTotpCommand } from './enable-totp.command';

/**
 * Verifies a code from the enrolled seed, turns TOTP on and issues fresh recovery codes (stored
 * hashed). `user.totp_enabled` is recorded in every workspace the user belongs to, since users
 * have no stream of their own.
 */
@Injectable()
export class EnableTotp {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly secondFactor: SecondFactor,
  ) {}

  async execute(userId: string, command: EnableTotpCommand): Promise<{ recoveryCodes: string[] }> {
    const { rows } = await this.pool.query<{ totp_secret: string | null; totp_enabled: boolean }>(
      `SELECT totp_secret, totp_enabled FROM identity.users WHERE id = $1`,
      [userId],
    );
    const user = rows[0];
    if (user?.totp_enabled) throw new ConflictError('two-factor sign-in is already enabled');
    if (!user?.totp_secret) throw new ConflictError('enrol first (POST /api/v1/auth/totp/enrol)');
    const secret = user.totp_secret;
    if (!(await this.secondFactor.checkTotp(userId, secret, command.code))) {
      throw new ValidationError('the code is not valid', [{ path: 'code', message: 'does not match the enrolled authenticator' }]);
    }
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.store.transaction(async (client) => {
      const enabled = await client.query(
        `UPDATE identity.users SET totp_enabled = true WHERE id = $1 AND NOT totp_enabled AND totp_secret = $2`,
        [userId, secret],
      );
      if (enabled.rowCount !== 1) throw new ConflictError('the enrolment changed meanwhile; enrol again');
      await client.query(`DELETE FROM identity.recovery_codes WHERE user_id = $1`, [userId]);
      await client.query(`INSERT INTO identity.recovery_codes (user_id, code_hash) SELECT $1, unnest($2::bytea[])`, [
        userId,
        recoveryCodes.map(recoveryCodeHash),
      ]);
      await appendUserAudit(this.store, client, userId, { kind: 'user', id: userId }, [{ type: IdentityEventTypes.userTotpEnabled, data: { userId } }]);
    });
    return { recoveryCodes };
  }
}
