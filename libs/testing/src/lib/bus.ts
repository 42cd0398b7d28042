import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { testEnv } from './env';

export interface TestBus {
  nc: NatsConnection;
  /** Pass to the bus library's topology(prefix). */
  prefix: string;
  cleanup(): Promise<void>;
}

/**
 * A NATS connection and a topology with a unique prefix, so each test file has its own
 * streams, subjects and buckets; cleanup() deletes them and closes the connection.
 */
export async function createTestBus(): Promise<TestBus> {
  const prefix = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const nc = await connect({ servers: testEnv.natsUrl.split(','), name: `test-${prefix}` });
  return {
    nc,
    prefix,
    cleanup: async () => {
      const jsm = await jetstreamManager(nc);
      const upper = prefix.toUpperCase();
      for await (const name of jsm.streams.names()) {
        if (name.startsWith(`${upper}_`) || name.startsWith(`KV_${upper}_`)) await jsm.streams.delete(name).catch(() => undefined);
      }
      await nc.drain();
    },
  };
}
