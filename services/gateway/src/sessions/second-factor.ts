import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { GATEWAY_REDIS, viaRedis } from '../identity/redis';
import { LoginThrottle } from './login-throttle';
import { recoveryCodeHash } from './recovery-codes';
import { looksLikeTotpCode, matchTotp } from './totp';

/**
 * Checks a second-factor code: a TOTP code (each time step accepted once per user) or an
 * unused recovery code (spent by the check). Failures count towards the per-user throttle.
 */
@Injectable()
export class SecondFactor {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(GATEWAY_REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
    private readonly throttle: LoginThrottle,
  ) {}

  /** True when `code` is a valid, unused TOTP code for `secret`. */
  async checkTotp(userId: string, secret: string, code: string): Promise<boolean> {
    await this.throttle.assertTotpAllowed(userId);
    const step = matchTotp(secret, code);
    const fresh = step !== null && (await this.claimStep(userId, step));
    await (fresh ? this.throttle.totpSucceeded(userId) : this.throttle.totpFailed(userId));
    return fresh;
  }

  /** True when `code` is the user's TOTP code or one of their unused recovery codes (then spent). */
  async checkTotpOrRecoveryCode(userId: string, secret: string, code: string): Promise<boolean> {
    if (looksLikeTotpCode(code)) return this.checkTotp(userId, secret, code);
    await this.throttle.assertTotpAllowed(userId);
    const { rowCount } = await this.pool.query(
      `UPDATE identity.recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`,
      [userId, recoveryCodeHash(code)],
    );
    const spent = rowCount === 1;
    await (spent ? this.throttle.totpSucceeded(userId) : this.throttle.totpFailed(userId));
    return spent;
  }

  /** Records the step as used; false when it already was (a replayed code). */
  private async claimStep(userId: string, step: number): Promise<boolean> {
    const key = `${this.options.redisKeyPrefix}totp-step:${userId}:${step}`;
    // Kept past the drift window of the step's code, after which the code is refused anyway.
    const claimed = await viaRedis('the session store', () => this.redis.set(key, '1', 'EX', 120, 'NX'));
    return claimed === 'OK';
  }
}
