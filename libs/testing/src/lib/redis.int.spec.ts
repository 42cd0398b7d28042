import { Redis } from 'ioredis';
import { testEnv } from './env';
import { freePort } from './processes';
import { createTestRedis } from './redis';

describe(createTestRedis.name, () => {
  let observer: Redis;

  beforeAll(() => {
    observer = new Redis(testEnv.redisUrl);
  });

  afterAll(async () => {
    await observer.quit();
  });

  it('gives each call a connected client and a key prefix of its own', async () => {
    const first = await createTestRedis();
    const second = await createTestRedis();
    try {
      expect(first.url).toBe(testEnv.redisUrl);
      expect(first.keyPrefix).toMatch(/^t[a-z0-9]+:$/);
      expect(second.keyPrefix).not.toBe(first.keyPrefix);
      await first.redis.set(`${first.keyPrefix}greeting`, 'hello');
      expect(await second.redis.get(`${first.keyPrefix}greeting`)).toBe('hello');
    } finally {
      await first.cleanup();
      await second.cleanup();
    }
  });

  it('deletes every key under its prefix across SCAN pages and leaves other prefixes alone when cleaned up', async () => {
    const sut = await createTestRedis();
    const neighbour = await createTestRedis();
    try {
      const pipeline = sut.redis.pipeline();
      // More keys than one SCAN page returns, so cleanup has to follow the cursor.
      for (let i = 0; i < 1_200; i++) pipeline.set(`${sut.keyPrefix}k${i}`, String(i));
      pipeline.hset(`${sut.keyPrefix}hash`, 'field', 'value');
      await pipeline.exec();
      await neighbour.redis.set(`${neighbour.keyPrefix}kept`, 'yes');

      await sut.cleanup();

      expect(await observer.keys(`${sut.keyPrefix}*`)).toEqual([]);
      expect(await observer.get(`${neighbour.keyPrefix}kept`)).toBe('yes');
      expect(sut.redis.status).toBe('end');
    } finally {
      await neighbour.cleanup();
    }
    expect(await observer.keys(`${neighbour.keyPrefix}*`)).toEqual([]);
  });

  it('fails naming the address without the password when Redis does not answer', async () => {
    const port = await freePort();
    const configured = testEnv.redisUrl;
    testEnv.redisUrl = `redis://:hunter2-secret@127.0.0.1:${port}`;
    try {
      const attempt = createTestRedis();
      await expect(attempt).rejects.toThrow(`Redis at 127.0.0.1:${port} is not reachable (set PACKETAGENT_TEST_REDIS_URL)`);
      await expect(attempt).rejects.not.toThrow('hunter2-secret');
    } finally {
      testEnv.redisUrl = configured;
    }
  });
});
