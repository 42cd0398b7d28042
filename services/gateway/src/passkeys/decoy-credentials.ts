import { Inject, Injectable } from '@nestjs/common';
import { createHmac, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { GATEWAY_OPTIONS, type ResolvedGatewayOptions } from '../gateway.options';
import { GATEWAY_REDIS, viaRedis } from '../identity/redis';

/**
 * A stand-in credential for an address without passkeys (or without an account), so the
 * sign-in options do not tell who has passkeys: the same address always gets the same id, on
 * every replica, from a key kept in Redis.
 */
@Injectable()
export class DecoyCredentials {
  constructor(
    @Inject(GATEWAY_REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_OPTIONS) private readonly options: ResolvedGatewayOptions,
  ) {}

  async for(email: string): Promise<{ id: string; transports: string[] }> {
    const key = await this.key();
    return { id: createHmac('sha256', key).update(email, 'utf8').digest().toString('base64url'), transports: ['internal', 'hybrid'] };
  }

  private async key(): Promise<Buffer> {
    const name = `${this.options.redisKeyPrefix}passkey-decoy-key`;
    const stored = await viaRedis('the session store', async () => {
      await this.redis.set(name, randomBytes(32).toString('base64url'), 'NX');
      return this.redis.get(name);
    });
    if (!stored) throw new Error('the decoy key was not kept');
    return Buffer.from(stored, 'base64url');
  }
}
