/**
 * `npm run bench`: the event store against a raw INSERT, and the relay against direct
 * nats.js publishes, in the same run on the same database and NATS. Prints a table and
 * writes JSON to tools/bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { topology, type Topology } from '@packetagent/bus';
import { createTestBus, createTestDatabase, type TestDatabase } from '@packetagent/testing';
import { benchRawInsert, benchStoreAppend, createRawTable, type AppendCase, type AppendResult } from './append.bench';
import { benchDirectPublishLag, benchDirectPublishRate, benchRelayDrain, benchRelayLag } from './relay.bench';
import { ratio, table } from './stats';

const quick = process.env['PACKETAGENT_BENCH_QUICK'] === '1';
const scale = quick ? 0.1 : 1;

async function withFresh<T>(fn: (fresh: { db: TestDatabase; nc: NatsConnection; topo: Topology }) => Promise<T>): Promise<T> {
  const db = await createTestDatabase({ max: 40 });
  // Flush what earlier phases left dirty, so their write-back does not land in this one
  // (needs superuser or pg_checkpoint; skipped otherwise).
  await db.pool.query('CHECKPOINT').catch(() => undefined);
  const bus = await createTestBus();
  try {
    return await fn({ db, nc: bus.nc, topo: topology(bus.prefix) });
  } finally {
    await bus.cleanup();
    await db.drop();
  }
}

async function main(): Promise<void> {
  const db = await createTestDatabase({ max: 24 });
  try {
    await createRawTable(db.pool);
    const cases: AppendCase[] = [
      { clients: 1, eventsPerAppend: 1, appendsPerClient: Math.round(3_000 * scale) },
      { clients: 16, eventsPerAppend: 1, appendsPerClient: Math.round(400 * scale) },
      { clients: 1, eventsPerAppend: 100, appendsPerClient: Math.round(300 * scale) },
      { clients: 16, eventsPerAppend: 100, appendsPerClient: Math.round(40 * scale) },
    ];
    const append: { ours: AppendResult; raw: AppendResult }[] = [];
    for (const [index, spec] of cases.entries()) {
      // Warm both paths, then alternate raw / ours so drift affects them alike.
      await benchRawInsert(db.pool, { ...spec, appendsPerClient: Math.max(5, Math.round(spec.appendsPerClient / 10)) }, `warm${index}`);
      await benchStoreAppend(db.pool, { ...spec, appendsPerClient: Math.max(5, Math.round(spec.appendsPerClient / 10)) }, `warm${index}`);
      const raw = await benchRawInsert(db.pool, spec, `c${index}`);
      const ours = await benchStoreAppend(db.pool, spec, `c${index}`);
      append.push({ ours, raw });
    }
    process.stdout.write('\n(a) append: event store vs raw INSERT of the same rows (same database)\n');
    process.stdout.write(
      `${table(
        ['clients', 'events/append', 'store p50 ms', 'raw p50 ms', 'p50 ratio', 'store p99 ms', 'raw p99 ms', 'store ev/s', 'raw ev/s', 'throughput ratio'],
        append.map(({ ours, raw }) => [
          ours.case.clients, ours.case.eventsPerAppend, ours.latencyMs.p50, raw.latencyMs.p50, ratio(ours.latencyMs.p50, raw.latencyMs.p50),
          ours.latencyMs.p99, raw.latencyMs.p99, ours.eventsPerSecond, raw.eventsPerSecond, ratio(ours.eventsPerSecond, raw.eventsPerSecond),
        ]),
      )}\n`,
    );

    const seconds = quick ? 2 : 10;
    const drainCount = quick ? 8_000 : 48_000;
    // Each relay measurement starts from an empty store and its own stream.
    const relayLag = await withFresh((fresh) => benchRelayLag(fresh.db.pool, fresh.nc, fresh.topo, fresh.db.url, 1_000, seconds));
    const directLag = await withFresh((fresh) => benchDirectPublishLag(fresh.nc, fresh.topo, 1_000, seconds));
    const relayDrain = await withFresh((fresh) => benchRelayDrain(fresh.db.pool, fresh.nc, fresh.topo, fresh.db.url, drainCount));
    const directRate = await withFresh((fresh) => benchDirectPublishRate(fresh.nc, fresh.topo, drainCount));
    const storeRate = Math.max(...append.map((a) => a.ours.eventsPerSecond));
    const storeSingle = append.find((a) => a.ours.case.clients === 16 && a.ours.case.eventsPerAppend === 1)!.ours.eventsPerSecond;

    process.stdout.write(`\n(b) relay lag at a steady ${relayLag.ratePerSecond} events/s for ${seconds} s\n`);
    process.stdout.write(
      `${table(['path', 'p50 ms', 'p99 ms', 'max ms', 'events'], [relayLag, directLag].map((r) => [r.kind, r.lagMs.p50, r.lagMs.p99, r.lagMs.max, r.lagMs.count]))}\n`,
    );
    process.stdout.write(`\n(b) sustained rate (${drainCount} events)\n`);
    process.stdout.write(
      `${table(['path', 'events/s', 'vs direct publish', 'vs store 16x1 append', 'vs store best append'], [
        [relayDrain.kind, relayDrain.eventsPerSecond, ratio(relayDrain.eventsPerSecond, directRate.eventsPerSecond), ratio(relayDrain.eventsPerSecond, storeSingle), ratio(relayDrain.eventsPerSecond, storeRate)],
        [directRate.kind, directRate.eventsPerSecond, '1.00x', '', ''],
      ])}\n`,
    );

    const results = { at: new Date().toISOString(), quick, node: process.version, append, relayLag, directLag, relayDrain, directRate };
    const dir = join(__dirname, '..', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `bench-${results.at.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(results, null, 2));
    writeFileSync(join(dir, 'latest.json'), JSON.stringify(results, null, 2));
    process.stdout.write(`\nwrote ${file}\n`);
  } finally {
    await db.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
