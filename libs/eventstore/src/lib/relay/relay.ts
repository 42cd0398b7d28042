import { Client, type Pool } from 'pg';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type PubAck } from '@nats-io/jetstream';
import { eventSubject } from '@packetagent/contracts';
import { BusHeaders, ensureEventsStream, type EventsStreamOptions, type Topology } from '@packetagent/bus';
import { withSpan } from '@packetagent/telemetry';
import { DEFAULT_DOORBELL_CHANNEL } from '../event-store';
import { decidePublishable, parseSnapshot, type PendingGap, type PgSnapshot } from './gap-rule';
import { findMissingPositions } from './stream-audit';

export interface RelayOptions {
  /** Cursor row and leadership lock name; one active relay per name. */
  name?: string;
  connectionString: string;
  batchSize?: number;
  /** Fallback poll when no doorbell rings, in milliseconds. */
  pollIntervalMs?: number;
  /** How often a standby tries to become the active relay, in milliseconds. */
  leaderRetryMs?: number;
  /** How often the stream is checked against the store, in milliseconds (0 disables). */
  verifyIntervalMs?: number;
  doorbellChannel?: string;
  publishTimeoutMs?: number;
  stream?: EventsStreamOptions;
  /** Called when JetStream has acknowledged events, with the time in epoch milliseconds (fractional). */
  onPublished?: (events: readonly WireEvent[], ackedAt: number) => void;
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

export interface RelayStatus {
  role: 'active' | 'standby' | 'stopped';
  cursor: number;
  streamSequence: number;
  lastPublishAt: Date | null;
  lastVerification: RepairReport | null;
  lastError: string | null;
  /** First position the relay is waiting on (an in-progress transaction may still fill it). */
  waitingOn: number | null;
  /** Events this process published for the first time, republished as repairs, and positions it skipped as rolled back. */
  publishedTotal: number;
  repairedTotal: number;
  abandonedTotal: number;
}

export interface RepairReport {
  at: Date;
  checkedUpTo: number;
  streamMessages: number;
  expected: number;
  missing: number[];
  republished: number;
}

/** What the relay needs to publish one event: routing fields and the envelope's JSON text. */
export interface WireEvent {
  position: number;
  id: string;
  type: string;
  workspaceId: string;
  stream: string;
  schemaVersion: number;
  traceparent: string | null;
  json: string;
}

/**
 * The columns a WireEvent is made of, for any query over `events e`. Postgres renders each
 * envelope's JSON itself, so the relay forwards text without parsing and re-serialising it.
 */
const WIRE_COLUMNS = `e.global_position AS p, e.event_id AS id, e.type, e.workspace_id, e.stream_id, e.schema_version,
  e.metadata->>'traceparent' AS traceparent,
  json_build_object(
    'id', e.event_id, 'type', e.type, 'schemaVersion', e.schema_version, 'stream', e.stream_id,
    'streamVersion', e.stream_version, 'globalPosition', e.global_position, 'workspaceId', e.workspace_id,
    'occurredAt', to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'causationId', e.metadata->'causationId', 'correlationId', e.metadata->'correlationId',
    'traceparent', e.metadata->'traceparent', 'actor', e.metadata->'actor', 'data', e.data,
    'digest', e.digest, 'prevDigest', e.prev_digest
  )::text AS envelope`;

interface WireRow {
  p: string | null;
  id: string;
  type: string;
  workspace_id: string;
  stream_id: string;
  schema_version: number;
  traceparent: string | null;
  envelope: string;
}

function toWire(rows: WireRow[]): WireEvent[] {
  return rows
    .filter((row) => row.p !== null)
    .map((row) => ({
      position: Number(row.p),
      id: row.id,
      type: row.type,
      workspaceId: row.workspace_id,
      stream: row.stream_id,
      schemaVersion: row.schema_version,
      traceparent: row.traceparent,
      json: row.envelope,
    }));
}

const LOCK_NAMESPACE = 0x5041_5245; // "PARE"

/**
 * Publishes committed events from the Postgres store to JetStream in global order, exactly
 * once per event id. Several replicas may run; a Postgres advisory lock on a dedicated
 * connection picks the active one, and JetStream's expected-last-sequence check fences a
 * deposed one that still tries to publish.
 */
export class OutboxRelay {
  private readonly name: string;
  private readonly opts: Required<Omit<RelayOptions, 'log' | 'stream' | 'connectionString' | 'name' | 'onPublished'>>;
  private control: Client | null = null;
  private js!: JetStreamClient;
  private jsm!: JetStreamManager;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private rung = false;
  private pending: PendingGap | null = null;
  private lastVerifyAt = 0;
  private prefetched: { after: number; batch: ReturnType<OutboxRelay['readBatch']> } | null = null;
  private cursorWrites: Promise<void> = Promise.resolve();
  private state: RelayStatus = {
    role: 'stopped',
    cursor: 0,
    streamSequence: 0,
    lastPublishAt: null,
    lastVerification: null,
    lastError: null,
    waitingOn: null,
    publishedTotal: 0,
    repairedTotal: 0,
    abandonedTotal: 0,
  };

  constructor(
    private readonly pool: Pool,
    private readonly nc: NatsConnection,
    private readonly topo: Topology,
    private readonly options: RelayOptions,
  ) {
    this.name = options.name ?? 'default';
    this.opts = {
      batchSize: options.batchSize ?? 500,
      pollIntervalMs: options.pollIntervalMs ?? 500,
      leaderRetryMs: options.leaderRetryMs ?? 1_000,
      verifyIntervalMs: options.verifyIntervalMs ?? 60_000,
      doorbellChannel: options.doorbellChannel ?? DEFAULT_DOORBELL_CHANNEL,
      publishTimeoutMs: options.publishTimeoutMs ?? 5_000,
    };
  }

  status(): RelayStatus {
    return { ...this.state };
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.js = jetstream(this.nc, { timeout: this.opts.publishTimeoutMs });
    this.jsm = await jetstreamManager(this.nc);
    this.state.role = 'standby';
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp();
    await this.loop;
    this.loop = null;
    await this.cursorWrites;
    await this.releaseControl();
    this.state.role = 'stopped';
  }

  /**
   * Events committed in the store but not yet acknowledged by JetStream, and for how long the
   * relay has been behind: the lesser of the oldest unpublished event's age and the time since
   * the cursor last moved (neither alone can be trusted: occurredAt is set by writers, and the
   * cursor rests while there is nothing to publish).
   */
  async lag(): Promise<{ cursor: number; events: number; stalledMs: number }> {
    const { rows } = await this.pool.query<{ cursor: string; behind: string; oldest_ms: string | null; cursor_ms: string | null }>(
      `SELECT coalesce(c.position, 0) AS cursor, b.behind,
              extract(epoch FROM now() - b.oldest) * 1000 AS oldest_ms,
              extract(epoch FROM now() - c.updated_at) * 1000 AS cursor_ms
         FROM (VALUES ($1::text)) AS n(name)
         LEFT JOIN relay_cursors c ON c.name = n.name
         CROSS JOIN LATERAL (
           SELECT count(*) AS behind, min(e.occurred_at) AS oldest FROM events e
            WHERE e.global_position > coalesce(c.position, 0)
         ) b`,
      [this.name],
    );
    const row = rows[0]!;
    const behind = Number(row.behind);
    // No cursor row yet means no relay has ever been active: everything is waiting.
    const sinceCursorMs = row.cursor_ms === null ? Number.POSITIVE_INFINITY : Number(row.cursor_ms);
    const stalledMs = behind > 0 ? Math.max(0, Math.min(Number(row.oldest_ms ?? 0), sinceCursorMs)) : 0;
    return { cursor: Number(row.cursor), events: behind, stalledMs: Math.round(stalledMs) };
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (!(await this.acquireLeadership())) {
          await this.idle(this.opts.leaderRetryMs);
          continue;
        }
        await this.becomeActive();
        while (this.running && this.control) {
          const progressed = await this.publishOnce();
          if (this.opts.verifyIntervalMs > 0 && Date.now() - this.lastVerifyAt >= this.opts.verifyIntervalMs) {
            await this.verifyAndRepair();
          }
          // While a hole is pending, its holders end without ringing: look again soon.
          if (!progressed) await this.idle(this.pending ? Math.min(this.opts.pollIntervalMs, 5) : this.opts.pollIntervalMs);
        }
      } catch (error) {
        this.state.lastError = error instanceof Error ? error.message : String(error);
        this.log('error', 'relay iteration failed', { error: this.state.lastError });
        await this.releaseControl();
        await this.idle(this.opts.leaderRetryMs);
      }
    }
  }

  private async acquireLeadership(): Promise<boolean> {
    if (this.control) return true;
    const client = new Client({ connectionString: this.options.connectionString, application_name: `pa-relay-${this.name}` });
    client.on('error', () => undefined);
    await client.connect();
    const { rows } = await client.query<{ acquired: boolean }>(`SELECT pg_try_advisory_lock($1, hashtext($2)) AS acquired`, [
      LOCK_NAMESPACE,
      this.name,
    ]);
    if (!rows[0]?.acquired) {
      await client.end().catch(() => undefined);
      this.state.role = 'standby';
      return false;
    }
    // Losing this connection loses the lock: stop publishing at once.
    client.on('end', () => {
      if (this.control === client) {
        this.control = null;
        this.state.role = this.running ? 'standby' : 'stopped';
        this.wakeUp();
      }
    });
    client.on('notification', () => {
      this.rung = true;
      this.wakeUp();
    });
    await client.query(`LISTEN ${client.escapeIdentifier(this.opts.doorbellChannel)}`);
    this.control = client;
    this.state.role = 'active';
    this.log('info', 'relay is active', { name: this.name });
    return true;
  }

  private async releaseControl(): Promise<void> {
    const client = this.control;
    this.control = null;
    if (client) await client.end().catch(() => undefined);
  }

  private async becomeActive(): Promise<void> {
    const info = await ensureEventsStream(this.jsm, this.topo, this.options.stream);
    await this.pool.query(`INSERT INTO relay_cursors (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [this.name]);
    let cursor = await this.persistedCursor();
    const tail = info.state.messages > 0 ? await this.positionAt(info.state.last_seq, info.state.first_seq) : 0;
    if (tail > cursor) {
      // Published but the cursor write was lost (the previous relay died between the two).
      cursor = tail;
    } else if (tail < cursor && !(this.options.stream?.maxAgeMs ?? 0)) {
      // The stream lost its tail (JetStream acknowledges before fsync): publish it again, in order.
      this.log('warn', 'stream is behind the relay cursor; republishing its lost tail', { tail, cursor });
      const missing = await this.countEvents(tail, cursor);
      if (missing > 0) cursor = tail;
    }
    this.state.cursor = cursor;
    this.state.streamSequence = info.state.last_seq;
    this.pending = null;
    this.prefetched = null;
    await this.saveCursor();
    if (this.opts.verifyIntervalMs > 0) await this.verifyAndRepair();
  }

  /** One read-decide-publish round. Returns whether anything moved. */
  private async publishOnce(): Promise<boolean> {
    this.rung = false;
    const prefetched = this.prefetched;
    this.prefetched = null;
    const batch = prefetched?.after === this.state.cursor ? await prefetched.batch : await this.readBatch(this.state.cursor);
    const decision = decidePublishable(this.state.cursor, batch.events, batch.snapshot, this.pending);
    this.pending = decision.pending;
    this.state.waitingOn = decision.pending?.from ?? null;
    if (decision.abandonedPositions.length) {
      this.state.abandonedTotal += decision.abandonedPositions.length;
      this.log('info', 'skipping positions of rolled-back transactions', { positions: decision.abandonedPositions });
    }
    if (decision.publish.length === 0 && decision.cursor === this.state.cursor) return false;
    const envelopes = decision.publish;
    // A full batch means more is probably waiting: read it while this one is being published.
    if (batch.events.length === this.opts.batchSize && decision.pending === null) {
      this.prefetched = { after: decision.cursor, batch: this.readBatch(decision.cursor) };
      this.prefetched.batch.catch(() => undefined);
    }
    const published = await this.publishInOrder(envelopes, false);
    const ackedAt = performance.timeOrigin + performance.now();
    const before = this.state.cursor;
    const fullyPublished = published === envelopes.length;
    this.state.cursor = fullyPublished ? decision.cursor : envelopes[published - 1]?.position ?? before;
    // Not awaited: a lost cursor write only means a restart finds the stream tail ahead of it.
    this.cursorWrites = this.cursorWrites.then(() => this.saveCursor()).catch((error: unknown) => {
      this.log('warn', 'cursor write failed', { error: error instanceof Error ? error.message : String(error) });
    });
    if (published > 0) {
      this.state.publishedTotal += published;
      this.state.lastPublishAt = new Date();
      this.options.onPublished?.(envelopes.slice(0, published), ackedAt);
    }
    return this.state.cursor !== before;
  }

  /**
   * Rows after `after` and the snapshot they were read in, from one statement (one snapshot),
   * plus a transaction id taken after that snapshot: an upper bound on the ids of every
   * transaction that could hold a hole (see gap-rule.ts). Taking it costs one id per read; the
   * transaction writes nothing, so its commit does not wait for a WAL flush.
   */
  private async readBatch(after: number): Promise<{ snapshot: PgSnapshot; events: WireEvent[] }> {
    const { rows } = await this.pool.query<WireRow & { snap: string; bound: string }>(
      `SELECT s.snap, s.bound, ${WIRE_COLUMNS}
         FROM (SELECT pg_current_snapshot()::text AS snap, pg_current_xact_id()::text AS bound) s
         LEFT JOIN LATERAL (
           SELECT * FROM events WHERE global_position > $1 ORDER BY global_position LIMIT $2
         ) e ON true`,
      [after, this.opts.batchSize],
    );
    return { snapshot: parseSnapshot(rows[0]!.snap, rows[0]!.bound), events: toWire(rows) };
  }

  /**
   * Pipelines the batch, each message requiring the stream's last sequence to be the one
   * before it, so the stream order is the store order even if a publish fails midway.
   * Returns how many leading events are now in the stream.
   */
  private async publishInOrder(events: WireEvent[], repair: boolean): Promise<number> {
    if (events.length === 0) return 0;
    return withSpan('relay.publish', { attributes: { 'pa.count': events.length, 'pa.repair': repair } }, async () => {
      const base = this.state.streamSequence;
      const attempts = events.map((event, index) =>
        this.js.publish(eventSubject(this.topo.eventsSubjectRoot, event), event.json, {
          msgID: repair ? `${event.id}:repair:${Date.now()}` : event.id,
          expect: { lastSequence: base + index },
          headers: this.headersFor(event, repair),
        }),
      );
      const results = await Promise.allSettled(attempts);
      let done = 0;
      for (const [index, result] of results.entries()) {
        const event = events[index]!;
        if (result.status === 'rejected') {
          this.log('warn', 'publish failed; resynchronising with the stream', {
            position: event.position,
            error: result.reason instanceof Error ? result.reason.message : String(result.reason),
          });
          break;
        }
        const ack = result.value;
        if (!ack.duplicate) {
          this.state.streamSequence = ack.seq;
          done++;
          continue;
        }
        // A duplicate took no sequence, so the pipelined messages after it expected the wrong
        // one: count it and let the next round publish the rest.
        if (!(await this.stillStored(ack, event))) {
          // The id is remembered but the message is gone (deleted within the dedupe window).
          await this.resync();
          if ((await this.publishInOrder([event], true)) === 0) break;
        }
        done++;
        break;
      }
      if (done < events.length) await this.resync();
      return done;
    });
  }

  private headersFor(event: WireEvent, repair: boolean) {
    const h = natsHeaders();
    h.set(BusHeaders.EventId, event.id);
    h.set(BusHeaders.GlobalPosition, String(event.position));
    h.set(BusHeaders.EventType, event.type);
    h.set(BusHeaders.SchemaVersion, String(event.schemaVersion));
    if (event.traceparent) h.set(BusHeaders.Traceparent, event.traceparent);
    if (repair) h.set(BusHeaders.Repaired, 'true');
    return h;
  }

  private async stillStored(ack: PubAck, event: WireEvent): Promise<boolean> {
    const message = await this.jsm.streams.getMessage(this.topo.eventsStream, { seq: ack.seq }).catch(() => null);
    return message?.header?.get(BusHeaders.EventId) === event.id;
  }

  /**
   * Re-reads the stream's last sequence after a failed or rejected publish. It first proves the
   * leadership lock is still held (its connection answers), so a relay deposed without noticing
   * stops here instead of publishing again.
   */
  private async resync(): Promise<void> {
    if (!this.control) throw new Error('relay lost its leadership connection');
    await this.control.query('SELECT 1');
    const info = await this.jsm.streams.info(this.topo.eventsStream);
    this.state.streamSequence = info.state.last_seq;
  }

  /**
   * Checks that the stream holds every event the cursor says was published, and republishes
   * what is missing (marked Pa-Repaired, after the current tail).
   */
  async verifyAndRepair(): Promise<RepairReport> {
    return withSpan('relay.verify', {}, async () => {
      this.lastVerifyAt = Date.now();
      const upTo = this.state.cursor;
      const info = await this.jsm.streams.info(this.topo.eventsStream);
      const expected = await this.countEvents(0, upTo);
      let missing: number[] = [];
      // With a maximum age, messages leave the stream by design: counting cannot tell loss from expiry.
      const expiring = (this.options.stream?.maxAgeMs ?? 0) > 0;
      if (!expiring && info.state.messages < expected) {
        missing = await findMissingPositions(this.js, this.pool, this.topo.eventsStream, upTo, info.state.messages);
      }
      let republished = 0;
      if (missing.length) {
        this.log('warn', 'stream is missing published events; republishing', { count: missing.length, first: missing[0] });
        await this.resync();
        for (let i = 0; i < missing.length; i += this.opts.batchSize) {
          const chunk = missing.slice(i, i + this.opts.batchSize);
          const { rows } = await this.pool.query<WireRow>(
            `SELECT ${WIRE_COLUMNS} FROM events e WHERE e.global_position = ANY($1) ORDER BY e.global_position`,
            [chunk],
          );
          republished += await this.publishInOrder(toWire(rows), true);
        }
      }
      this.state.repairedTotal += republished;
      const report = { at: new Date(), checkedUpTo: upTo, streamMessages: info.state.messages, expected, missing, republished };
      this.state.lastVerification = report;
      return report;
    });
  }

  /**
   * The newest first-time position at or before stream sequence `seq`, stepping back over
   * repaired messages (they sit after newer ones) and deleted ones. 0 when the stream holds
   * none. Errors other than "no such message" propagate: guessing 0 would rewind the relay and
   * republish everything.
   */
  private async positionAt(seq: number, firstSeq: number): Promise<number> {
    for (let at = seq; at >= Math.max(1, firstSeq); at--) {
      const message = await this.jsm.streams.getMessage(this.topo.eventsStream, { seq: at });
      if (!message || message.header?.get(BusHeaders.Repaired) === 'true') continue;
      return Number(message.header?.get(BusHeaders.GlobalPosition) ?? 0);
    }
    return 0;
  }

  private async countEvents(after: number, upTo: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM events WHERE global_position > $1 AND global_position <= $2`,
      [after, upTo],
    );
    return Number(rows[0]!.n);
  }

  private async persistedCursor(): Promise<number> {
    const { rows } = await this.pool.query<{ position: string }>(`SELECT position FROM relay_cursors WHERE name = $1`, [this.name]);
    return rows[0] ? Number(rows[0].position) : 0;
  }

  /**
   * Written through the leadership connection: if this relay has lost the lock, the write
   * fails instead of moving the cursor under the new leader.
   */
  private async saveCursor(): Promise<void> {
    if (!this.control) throw new Error('relay lost its leadership connection');
    await this.control.query(
      `UPDATE relay_cursors SET position = $2, updated_at = now() WHERE name = $1 AND position <> $2`,
      [this.name, this.state.cursor],
    );
  }

  private idle(ms: number): Promise<void> {
    if (!this.running || this.rung) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  private wakeUp(): void {
    this.wake?.();
  }

  private log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.options.log?.(level, message, fields);
  }
}
