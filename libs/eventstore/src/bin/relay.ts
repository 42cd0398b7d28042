/**
 * Runs the outbox relay as its own process (the all-in-one app also hosts it). Settings come
 * from the environment, with the all-in-one app's names and defaults: PACKETAGENT_DATABASE_URL,
 * PACKETAGENT_NATS_URL, PACKETAGENT_BUS_PREFIX, PACKETAGENT_NATS_REPLICAS,
 * PACKETAGENT_RELAY_NAME, PACKETAGENT_RELAY_BATCH_SIZE, PACKETAGENT_RELAY_POLL_MS,
 * PACKETAGENT_RELAY_VERIFY_INTERVAL_MS.
 */
import { startTelemetry } from '@packetagent/telemetry';

startTelemetry({ serviceName: 'relay' });

import { connectNats, topology } from '@packetagent/bus';
import { createPool } from '../lib/pool';
import { OutboxRelay } from '../lib/relay/relay';

async function main(): Promise<void> {
  const databaseUrl = process.env['PACKETAGENT_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/packetagent';
  const nc = await connectNats({ url: process.env['PACKETAGENT_NATS_URL'] ?? 'nats://127.0.0.1:4222', name: 'relay' });
  const pool = createPool({ connectionString: databaseUrl, max: 4 });
  const relay = new OutboxRelay(pool, nc, topology(process.env['PACKETAGENT_BUS_PREFIX'] ?? ''), {
    connectionString: databaseUrl,
    name: process.env['PACKETAGENT_RELAY_NAME'] ?? 'default',
    batchSize: Number(process.env['PACKETAGENT_RELAY_BATCH_SIZE'] ?? 500),
    pollIntervalMs: Number(process.env['PACKETAGENT_RELAY_POLL_MS'] ?? 500),
    verifyIntervalMs: Number(process.env['PACKETAGENT_RELAY_VERIFY_INTERVAL_MS'] ?? 60_000),
    stream: { replicas: Number(process.env['PACKETAGENT_NATS_REPLICAS'] ?? 1) },
    log: (level, message, fields) => process.stdout.write(`${JSON.stringify({ level, message, ...fields })}\n`),
  });
  await relay.start();
  const shutdown = async () => {
    await relay.stop();
    await nc.drain();
    await pool.end();
    process.exit(0);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`relay failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
