import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { ConflictError } from '../../../identity/errors';
import { newTotpSecret, totpUri } from '../../totp';

export const EnrolTotpResult = z.object({
  otpauthUri: z.string().describe('for an authenticator app (QR code); shown this once'),
  secret: z.string().describe('the same seed in base32, for typing in; shown this once'),
});
export class EnrolTotpResultDto extends createZodDto(EnrolTotpResult) {}

/**
 * Starts TOTP enrolment: a new seed, not yet required at login until a code from it is verified
 * (enable-totp). Enrolling again before that replaces the seed.
 */
@Injectable()
export class EnrolTotp {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(userId: string): Promise<z.output<typeof EnrolTotpResult>> {
    const secret = newTotpSecret();
    const { rows } = await this.pool.query<{ email: string }>(
      `UPDATE identity.users SET totp_secret = $2 WHERE id = $1 AND NOT totp_enabled RETURNING email`,
      [userId, secret],
    );
    const user = rows[0];
    if (!user) throw new ConflictError('two-factor sign-in is already enabled');
    return { otpauthUri: totpUri(secret, user.email), secret };
  }
}
