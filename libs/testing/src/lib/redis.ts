import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { testEnv } from './env';

export interface TestRedis {
  url: string;
  /** Every key a test writes starts with this, so test files sharing one Redis never collide. */
  keyPrefix: string;
  redis: Redis;
  /** Deletes the keys under keyPrefix and closes the connection. */
  cleanup(): Promise<void>;
}

/** host:port only: a Redis URL may carry a password, which never goes into an error message. */
function describeUrl(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured URL';
  }
}

/**
 * A Redis connection and a key prefix of its own for one test file. The client itself adds no
 * prefix: pass keyPrefix to the code under test (e.g. its `redisKeyPrefix` option).
 */
export async function createTestRedis(): Promise<TestRedis> {
  const url = testEnv.redisUrl;
  const keyPrefix = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}:`;
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    connectionName: `test-${keyPrefix.slice(0, -1)}`,
    // After a failed first connect, disconnect() waits this long on a socket that is already
    // closed; the 2 s default would hold the test process open after the suite ends.
    disconnectTimeout: 100,
  });
  // Failed commands reject on their own; the client's 'error' events would only repeat them.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`Redis at ${describeUrl(url)} is not reachable (set PACKETAGENT_TEST_REDIS_URL): ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    url,
    keyPrefix,
    redis,
    cleanup: async () => {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500);
        if (keys.length) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
      await redis.quit();
    },
  };
}
