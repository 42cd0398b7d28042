import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { ServiceUnavailableError } from './errors';

export const GATEWAY_REDIS = Symbol('GATEWAY_REDIS');

export function connectRedis(url: string): Redis {
  // A request fails fast while Redis is away (503) instead of queueing behind reconnects.
  // A short disconnect timeout: disconnecting while reconnecting leaves ioredis waiting that long
  // on a socket that already closed, which would hold up shutdown.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, connectionName: 'packetagent-gateway', disconnectTimeout: 200 });
  // Command failures are reported to the caller; connection errors alone need no crash.
  redis.on('error', () => undefined);
  return redis;
}

/** Runs a Redis call; a failure of Redis itself becomes a 503, never a 500. */
export async function viaRedis<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new ServiceUnavailableError(`${what} is unavailable`, { cause: error });
  }
}

@Injectable()
export class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(GATEWAY_REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    // QUIT would wait in the offline queue of a client that is reconnecting; just stop it.
    if (this.redis.status !== 'ready') {
      this.redis.disconnect();
      return;
    }
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
