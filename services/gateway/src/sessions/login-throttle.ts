import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { RateLimitedError, ServiceUnavailableError } from '../identity/errors';
import { GATEWAY_REDIS } from '../identity/redis';
import { sha256 } from '../identity/secrets';

/**
 * Counts failed sign-in attempts per e-mail address, per client address and per user's second
 * factor. A key that used up its failures gets 429 with Retry-After until its window ends; a
 * successful attempt clears the e-mail (or user) count. Addresses are hashed in Redis keys.
 */
@Injectable()
export class LoginThrottle {
  private readonly byEmail: RateLimiterRedis;
  private readonly byIp: RateLimiterRedis;
  private readonly byUserTotp: RateLimiterRedis;

  constructor(@Inject(GATEWAY_REDIS) redis: Redis, @Inject(GATEWAY_OPTIONS) options: ResolvedGatewayOptions) {
    const { maxFailuresPerEmail, maxFailuresPerIp, maxFailuresPerUserTotp, windowSeconds } = options.loginThrottle;
    const limiter = (name: string, points: number) =>
      new RateLimiterRedis({ storeClient: redis, keyPrefix: `${options.redisKeyPrefix}throttle:${name}`, points, duration: windowSeconds });
    this.byEmail = limiter('login-email', maxFailuresPerEmail);
    this.byIp = limiter('login-ip', maxFailuresPerIp);
    this.byUserTotp = limiter('totp-user', maxFailuresPerUserTotp);
  }

  async assertLoginAllowed(email: string, ip: string): Promise<void> {
    await Promise.all([assertAllowed(this.byEmail, emailKey(email)), assertAllowed(this.byIp, ip)]);
  }

  async loginFailed(email: string, ip: string): Promise<void> {
    await Promise.all([recordFailure(this.byEmail, emailKey(email)), recordFailure(this.byIp, ip)]);
  }

  /** For a sign-in that names no e-mail address (a discoverable passkey): the client address alone. */
  assertClientAllowed(ip: string): Promise<void> {
    return assertAllowed(this.byIp, ip);
  }

  clientFailed(ip: string): Promise<void> {
    return recordFailure(this.byIp, ip);
  }

  async loginSucceeded(email: string): Promise<void> {
    await reset(this.byEmail, emailKey(email));
  }

  assertTotpAllowed(userId: string): Promise<void> {
    return assertAllowed(this.byUserTotp, userId);
  }

  totpFailed(userId: string): Promise<void> {
    return recordFailure(this.byUserTotp, userId);
  }

  totpSucceeded(userId: string): Promise<void> {
    return reset(this.byUserTotp, userId);
  }
}

function emailKey(email: string): string {
  return sha256(email).toString('hex');
}

function limited(result: RateLimiterRes): RateLimitedError {
  return new RateLimitedError(Math.max(1, Math.ceil(result.msBeforeNext / 1000)));
}

async function assertAllowed(limiter: RateLimiterRedis, key: string): Promise<void> {
  let state: RateLimiterRes | null;
  try {
    state = await limiter.get(key);
  } catch (error) {
    throw new ServiceUnavailableError('the login throttle is unavailable', { cause: error });
  }
  if (state && state.consumedPoints >= limiter.points) throw limited(state);
}

async function recordFailure(limiter: RateLimiterRedis, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (rejection) {
    // Rejected with the limiter's state when the count was already used up (a concurrent attempt).
    if (rejection instanceof RateLimiterRes) throw limited(rejection);
    throw new ServiceUnavailableError('the login throttle is unavailable', { cause: rejection });
  }
}

async function reset(limiter: RateLimiterRedis, key: string): Promise<void> {
  try {
    await limiter.delete(key);
  } catch (error) {
    throw new ServiceUnavailableError('the login throttle is unavailable', { cause: error });
  }
}
