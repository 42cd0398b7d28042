import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { ensureEventsStream, type Topology } from '@packetagent/bus';
import { OutboxRelay, PostgresEventStore, type NewEvent } from '@packetagent/eventstore';
import { now, paced, summarise, until, type Summary } from './stats';

const actor = { kind: 'system', id: 'bench' } as const;
const event = (i: number): NewEvent => ({ type: 'bench.happened', schemaVersion: 1, data: { i, note: 'relay benchmark' }, actor });

export interface LagResult {
  kind: 'relay (commit -> JetStream ack)' | 'direct nats.js publish (publish -> ack)';
  ratePerSecond: number;
  lagMs: Summary;
}

export interface RateResult {
  kind: 'relay drain' | 'direct nats.js async publish';
  events: number;
  eventsPerSecond: number;
}


function relayFor(pool: Pool, nc: NatsConnection, topo: Topology, url: string, onPublished: (ids: string[], at: number) => void) {
  return new OutboxRelay(pool, nc, topo, {
    connectionString: url,
    verifyIntervalMs: 0,
    log: process.env['PACKETAGENT_BENCH_DEBUG'] ? (level, message, fields) => process.stderr.write(`${level} ${message} ${JSON.stringify(fields)}\n`) : undefined,
    batchSize: Number(process.env['PACKETAGENT_RELAY_BATCH_SIZE'] ?? 500),
    onPublished: (events, at) => onPublished(events.map((e) => e.id), at),
  });
}

export async function benchRelayLag(pool: Pool, nc: NatsConnection, topo: Topology, url: string, rate: number, seconds: number): Promise<LagResult> {
  const committedAt = new Map<string, number>();
  const ackedAt = new Map<string, number>();
  const relay = relayFor(pool, nc, topo, url, (ids, at) => ids.forEach((id) => ackedAt.set(id, at)));
  await relay.start();
  const store = new PostgresEventStore(pool);
  // Warm up (JIT, connections, stream creation) before anything is recorded.
  await paced(rate * 2, rate, 32, async (k) => void (await store.append(`benchwarm-${k}`, 'no_stream', [event(k)], { workspaceId: 'bench' })));
  await until(() => relay.status().cursor >= rate * 2, 'the warm-up events to be published');
  const total = rate * seconds;
  await paced(total, rate, 32, async (k) => {
    const result = await store.append(`benchlag-${k}`, 'no_stream', [event(k)], { workspaceId: 'bench' });
    committedAt.set(result.events[0]!.id, now());
  });
  await until(() => ackedAt.size >= committedAt.size && [...committedAt.keys()].every((id) => ackedAt.has(id)), 'every event to be acknowledged');
  await relay.stop();
  const lags = [...committedAt].map(([id, at]) => Math.max(0, ackedAt.get(id)! - at));
  if (process.env['PACKETAGENT_BENCH_DEBUG']) {
    for (let i = 0; i < lags.length; i += lags.length / 20) process.stderr.write(`${i}: ${Math.max(...lags.slice(i, i + lags.length / 20)).toFixed(1)} `);
  }
  return { kind: 'relay (commit -> JetStream ack)', ratePerSecond: rate, lagMs: summarise(lags) };
}

export async function benchDirectPublishLag(nc: NatsConnection, topo: Topology, rate: number, seconds: number): Promise<LagResult> {
  await ensureEventsStream(await jetstreamManager(nc), topo);
  const js = jetstream(nc);
  // Same warm-up as the relay run.
  await paced(rate * 2, rate, 32, async (k) => void (await js.publish(`${topo.eventsSubjectRoot}.bench.direct.bench.warm`, JSON.stringify(event(k)))));
  const lags: number[] = [];
  await paced(rate * seconds, rate, 32, async (k) => {
    const t0 = now();
    await js.publish(`${topo.eventsSubjectRoot}.bench.direct.bench.lag`, JSON.stringify(event(k)), { msgID: `direct-lag-${k}-${t0}` });
    lags.push(now() - t0);
  });
  return { kind: 'direct nats.js publish (publish -> ack)', ratePerSecond: rate, lagMs: summarise(lags) };
}

/** Loads `count` events with the relay stopped, then measures how fast it drains them. */
export async function benchRelayDrain(pool: Pool, nc: NatsConnection, topo: Topology, url: string, count: number): Promise<RateResult> {
  const store = new PostgresEventStore(pool, { doorbellChannel: null });
  const perAppend = 100;
  const writers = 8;
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < count / perAppend / writers; i++) {
        await store.append(`benchdrain-${w}`, i * perAppend, Array.from({ length: perAppend }, (_, e) => event(e)), { workspaceId: 'bench' });
      }
    }),
  );
  let published = 0;
  let firstAt = 0;
  let finishedAt = 0;
  const relay = relayFor(pool, nc, topo, url, (ids, at) => {
    if (published === 0) firstAt = at;
    published += ids.length;
    finishedAt = at;
  });
  await relay.start();
  await until(() => published >= count, 'the backlog to drain');
  await relay.stop();
  // From the first acknowledged batch to the last: start-up (stream check, leadership) is excluded.
  return { kind: 'relay drain', events: count, eventsPerSecond: count / ((finishedAt - firstAt) / 1_000) };
}

export async function benchDirectPublishRate(nc: NatsConnection, topo: Topology, count: number): Promise<RateResult> {
  await ensureEventsStream(await jetstreamManager(nc), topo);
  const js = jetstream(nc);
  const window = 500;
  const started = now();
  for (let i = 0; i < count; i += window) {
    await Promise.all(
      Array.from({ length: Math.min(window, count - i) }, (_, j) =>
        js.publish(`${topo.eventsSubjectRoot}.bench.direct.bench.rate`, JSON.stringify(event(i + j)), { msgID: `direct-rate-${i + j}-${started}` }),
      ),
    );
  }
  return { kind: 'direct nats.js async publish', events: count, eventsPerSecond: count / ((now() - started) / 1_000) };
}
