import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, topology, type Topology } from '@packetagent/bus';
import { testEnv } from './env';

export interface TestBus {
  nc: NatsConnection;
  topo: Topology;
  cleanup(): Promise<void>;
}

/**
 * A NATS connection and a topology with a unique prefix, so each test file has its own
 * streams, subjects and buckets; cleanup() deletes them and closes the connection.
 */
export async function createTestBus(): Promise<TestBus> {
  const prefix = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const topo = topology(prefix);
  const nc = await connectNats({ url: testEnv.natsUrl, name: `test-${prefix}` });
  return {
    nc,
    topo,
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
