import type { Pool, PoolClient } from 'pg';
import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { BusHeaders, type Topology } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import { PROJECTOR_LOCK, PROJECTOR_SCHEMA, ProjectionWriter } from './applier';
import { catchUpFromStore } from './catch-up';
import { checkpointsDdl, projectionDdl } from './ddl';
import { decodeForProjection, type Decoded } from './decode';
import { RebuildInProgressError } from './errors';
import type { Projection } from './projection';
import { identifier, qualified } from './table';

/** Where a rebuild builds its tables before they are swapped in. */
export const SHADOW_SCHEMA = 'projector_rebuild';
const RETIRED_SCHEMA = 'projector_retired';
/** Session-level lock held for a whole rebuild: one rebuild at a time. */
const REBUILD_LOCK = { namespace: PROJECTOR_LOCK.namespace, key: 2 } as const;

export interface RebuildOptions {
  pool: Pool;
  registry: EventRegistry;
  projection: Projection;
  /** Replays from JetStream when given and the stream still holds the first event; else from the events table. */
  bus?: { nc: NatsConnection; topology: Topology };
  /** False leaves the caught-up shadow schema in place instead of swapping it in (to compare). */
  swap?: boolean;
  batchSize?: number;
  progress?: (line: string) => void;
}

export interface RebuildResult {
  projection: string;
  source: 'jetstream' | 'events_table';
  applied: number;
  gaps: number;
  position: number;
  swapped: boolean;
}

/**
 * Rebuilds one projection from zero without stopping reads: replays every event into a shadow
 * schema, catches the shadow up with the live projection, then, under the lock every live
 * apply takes, catches up the last few events and moves the shadow tables in place of the live
 * ones in one transaction. Readers wait only for that transaction; the live projector resumes
 * from the same position on the rebuilt tables. See docs/adr/0015-projections.md.
 */
export async function rebuildProjection(options: RebuildOptions): Promise<RebuildResult> {
  const { pool, registry, projection } = options;
  const say = options.progress ?? (() => undefined);
  const guard = await pool.connect();
  try {
    const { rows } = await guard.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [REBUILD_LOCK.namespace, REBUILD_LOCK.key]);
    if (!rows[0]?.ok) throw new RebuildInProgressError();
    try {
      return await rebuildLocked(options, say);
    } finally {
      await guard.query('SELECT pg_advisory_unlock($1, $2)', [REBUILD_LOCK.namespace, REBUILD_LOCK.key]);
    }
  } finally {
    guard.release();
  }

  async function rebuildLocked(opts: RebuildOptions, log: (line: string) => void): Promise<RebuildResult> {
    await createShadow(pool, projection);
    const shadow = new ProjectionWriter(pool, [projection], { schema: SHADOW_SCHEMA, lock: false });
    const live = new ProjectionWriter(pool, [projection]);
    const target = (await live.positions())[projection.name]!;
    log(`rebuilding ${projection.name} into ${SHADOW_SCHEMA}; the live projection is at position ${target}`);
    const totals = { applied: 0, gaps: 0 };
    let source: RebuildResult['source'] = 'events_table';
    if (opts.bus && (await jetStreamHoldsStart(pool, opts.bus))) {
      source = 'jetstream';
      log(`replaying from JetStream ${opts.bus.topology.eventsStream}`);
      const replayed = await replayFromJetStream(pool, registry, shadow, opts.bus, target, log);
      totals.applied += replayed.applied;
      totals.gaps += replayed.gaps;
    } else {
      log(opts.bus ? 'JetStream no longer holds the first event; replaying from the events table' : 'replaying from the events table');
    }
    // Whatever JetStream lacked, and everything when it was not used, up to the live position.
    let position = await catchUp(shadow, target, totals, log);
    // The live projection moved on meanwhile: follow it without the lock while it is far ahead.
    for (let round = 0; round < 10; round++) {
      const now = (await live.positions())[projection.name]!;
      if (now - position < 100) break;
      position = await catchUp(shadow, now, totals, log);
    }
    if (opts.swap === false) {
      const now = (await live.positions())[projection.name]!;
      position = await catchUp(shadow, now, totals, log);
      log(`left ${projection.name} in ${SHADOW_SCHEMA} at position ${position}, not swapped`);
      return { projection: projection.name, source, ...totals, position, swapped: false };
    }
    position = await swapIn(pool, projection, async (livePosition) => catchUp(shadow, livePosition, totals, log));
    await pool.query(`DROP SCHEMA IF EXISTS ${SHADOW_SCHEMA} CASCADE`);
    log(`swapped the rebuilt ${projection.name} in at position ${position}: ${totals.applied} events applied, ${totals.gaps} gaps`);
    return { projection: projection.name, source, ...totals, position, swapped: true };
  }

  async function catchUp(shadow: ProjectionWriter, upTo: number, totals: { applied: number; gaps: number }, log: (line: string) => void): Promise<number> {
    const result = await catchUpFromStore(pool, registry, shadow, upTo, {
      batchSize: options.batchSize,
      onBatch: (batch) => log(`events table: applied ${totals.applied + batch.applied} events, at position ${batch.position}`),
    });
    totals.applied += result.applied;
    totals.gaps += result.gaps;
    return (await shadow.positions())[projection.name]!;
  }
}

async function createShadow(pool: Pool, projection: Projection): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`DROP SCHEMA IF EXISTS ${SHADOW_SCHEMA} CASCADE`);
    await client.query(`CREATE SCHEMA ${SHADOW_SCHEMA}`);
    await client.query(checkpointsDdl(SHADOW_SCHEMA));
    for (const statement of projectionDdl(SHADOW_SCHEMA, [projection])) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Whether the stream's first message is the store's first event (nothing has aged out of it). */
async function jetStreamHoldsStart(pool: Pool, bus: { nc: NatsConnection; topology: Topology }): Promise<boolean> {
  const { rows } = await pool.query<{ first: string | null }>('SELECT min(global_position) AS first FROM events');
  const first = rows[0]?.first;
  if (first === null || first === undefined) return false;
  const jsm = await jetstreamManager(bus.nc);
  const info = await jsm.streams.info(bus.topology.eventsStream).catch(() => null);
  if (!info || info.state.messages === 0) return false;
  const message = await jsm.streams.getMessage(bus.topology.eventsStream, { seq: info.state.first_seq }).catch(() => null);
  return Number(message?.header?.get(BusHeaders.GlobalPosition) ?? 0) === Number(first);
}

/**
 * Reads PA_EVENTS with an ordered ephemeral consumer from its first message to the last one at
 * the start, applying events up to `upTo`. A message the stream lost (republished later as a
 * repair) shows as an out-of-order refusal: the missing events are read from the table first.
 */
/** Events applied per transaction when replaying from JetStream. */
const REPLAY_BATCH = 500;

function positionOf(item: Decoded): number | null {
  return item.kind === 'event' ? item.event.globalPosition : item.gap.globalPosition;
}

async function replayFromJetStream(
  pool: Pool,
  registry: EventRegistry,
  shadow: ProjectionWriter,
  bus: { nc: NatsConnection; topology: Topology },
  upTo: number,
  log: (line: string) => void,
): Promise<{ applied: number; gaps: number }> {
  const jsm = await jetstreamManager(bus.nc);
  const info = await jsm.streams.info(bus.topology.eventsStream);
  const lastSeq = info.state.last_seq;
  const totals = { applied: 0, gaps: 0 };
  if (lastSeq === 0 || upTo === 0) return totals;
  // No subject filter: the stream holds only event subjects, and filters on an ordered
  // consumer need a 2.10 server.
  const consumer = await jetstream(bus.nc).consumers.get(bus.topology.eventsStream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume({ max_messages: REPLAY_BATCH });
  let applied = Math.min(...Object.values(await shadow.positions()));
  let batch: Decoded[] = [];
  // A batch is applied in one transaction when the store confirms it holds every committed event
  // of its range (nothing lost on the way, nothing repaired out of order); otherwise that range is
  // read from the store instead.
  const flush = async () => {
    const inRange = batch.filter((item) => (positionOf(item) ?? 0) > applied);
    batch = [];
    if (inRange.length === 0) return;
    const highest = Math.max(...inRange.map((item) => positionOf(item) ?? 0));
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE global_position > $1 AND global_position <= $2', [applied, highest]);
    const ordered = inRange.every((item, index) => index === 0 || (positionOf(item) ?? 0) > (positionOf(inRange[index - 1]!) ?? 0));
    if (ordered && Number(rows[0]!.n) === inRange.length) {
      await shadow.applyBatch(inRange);
      for (const item of inRange) {
        if (item.kind === 'event') totals.applied++;
        else totals.gaps++;
      }
    } else {
      const caught = await catchUpFromStore(pool, registry, shadow, highest);
      totals.applied += caught.applied;
      totals.gaps += caught.gaps;
    }
    applied = highest;
    log(`jetstream: applied ${totals.applied} events, at position ${applied}`);
  };
  try {
    for await (const message of messages) {
      const position = Number(message.headers?.get(BusHeaders.GlobalPosition) ?? 0);
      if (position > upTo) break;
      batch.push(decodeForProjection(registry, () => message.json(), { globalPosition: position || null, type: message.headers?.get(BusHeaders.EventType) || null }));
      if (batch.length >= REPLAY_BATCH) await flush();
      if (message.seq >= lastSeq) break;
    }
    await flush();
  } finally {
    await messages.close().catch(() => undefined);
  }
  log(`jetstream: applied ${totals.applied} events, ${totals.gaps} gaps`);
  return totals;
}

/**
 * The swap: under PROJECTOR_LOCK (no live apply can run), the shadow catches up to the live
 * position, then each live table moves out and its shadow moves in, in one transaction.
 */
async function swapIn(pool: Pool, projection: Projection, catchUpTo: (position: number) => Promise<number>): Promise<number> {
  const client: PoolClient = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [PROJECTOR_LOCK.namespace, PROJECTOR_LOCK.key]);
    const { rows } = await client.query<{ position: string }>(`SELECT position FROM ${qualified(PROJECTOR_SCHEMA, 'checkpoints')} WHERE projection = $1`, [projection.name]);
    const livePosition = Number(rows[0]?.position ?? 0);
    const shadowPosition = await catchUpTo(livePosition);
    if (shadowPosition !== livePosition) throw new Error(`rebuilt ${projection.name} reached ${shadowPosition}, not the live ${livePosition}`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${RETIRED_SCHEMA}`);
    for (const table of projection.tables) {
      const name = identifier(table.name);
      await client.query(`DROP TABLE IF EXISTS ${RETIRED_SCHEMA}.${name}`);
      await client.query(`ALTER TABLE ${PROJECTOR_SCHEMA}.${name} SET SCHEMA ${RETIRED_SCHEMA}`);
      await client.query(`ALTER TABLE ${SHADOW_SCHEMA}.${name} SET SCHEMA ${PROJECTOR_SCHEMA}`);
      await client.query(`DROP TABLE ${RETIRED_SCHEMA}.${name}`);
    }
    await client.query('COMMIT');
    return livePosition;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Rows of the projection's tables that differ between two schemas (both directions), table by table. */
export async function diffProjection(pool: Pool, projection: Projection, left: string, right: string): Promise<Record<string, { onlyLeft: number; onlyRight: number; rows: number }>> {
  const result: Record<string, { onlyLeft: number; onlyRight: number; rows: number }> = {};
  for (const table of projection.tables) {
    const columns = table.columns.map((column) => identifier(column.name)).join(', ');
    const a = qualified(left, table.name);
    const b = qualified(right, table.name);
    const { rows } = await pool.query<{ only_left: string; only_right: string; total: string }>(
      `SELECT (SELECT count(*) FROM (SELECT ${columns} FROM ${a} EXCEPT ALL SELECT ${columns} FROM ${b}) x) AS only_left,
              (SELECT count(*) FROM (SELECT ${columns} FROM ${b} EXCEPT ALL SELECT ${columns} FROM ${a}) y) AS only_right,
              (SELECT count(*) FROM ${a}) AS total`,
    );
    result[table.name] = { onlyLeft: Number(rows[0]!.only_left), onlyRight: Number(rows[0]!.only_right), rows: Number(rows[0]!.total) };
  }
  return result;
}
