import { DatabaseError, type Pool, type PoolClient } from 'pg';
import {
  ACTOR_KINDS,
  canonicalJson,
  eventDigestBody,
  Identifiers,
  jsonIssues,
  newEventId,
  sha256Hex,
  streamCategory,
  type Actor,
  type EventEnvelope,
  type EventRegistry,
  type JsonValue,
  type ValidationIssue,
} from '@packetagent/contracts';
import { currentTraceparent, withSpan } from '@packetagent/telemetry';
import { ConcurrencyError, EventTooLargeError, InvalidEventError } from './errors';
import { Doorbell } from './doorbell';
import { rowToEnvelope, type EventRow } from './rows';

export type ExpectedVersion = number | 'no_stream' | 'any';

export interface NewEvent {
  type: string;
  data: unknown;
  actor: Actor;
  /** Defaults to a new UUIDv7. */
  id?: string;
  /** Required without a registry; with one, the latest registered version is used. */
  schemaVersion?: number;
  causationId?: string | null;
  correlationId?: string | null;
  /** Defaults to the active trace context. */
  traceparent?: string | null;
  occurredAt?: Date;
}

export interface AppendOptions {
  workspaceId: string;
  /** Append inside the caller's transaction (state change and event commit together). */
  client?: PoolClient;
}

export interface AppendResult {
  streamVersion: number;
  firstGlobalPosition: number;
  lastGlobalPosition: number;
  events: EventEnvelope[];
}

export interface EventStoreOptions {
  /** Upper bound of one event's canonical envelope (data, metadata and ids), in bytes. */
  maxEventBytes?: number;
  /** Upper bound of events in one append. */
  maxEventsPerAppend?: number;
  /** When given, every appended event must match its registered schema. */
  registry?: EventRegistry;
  /** LISTEN/NOTIFY channel rung after each commit; null disables it. */
  doorbellChannel?: string | null;
}

export const DEFAULT_MAX_EVENT_BYTES = 512 * 1024;
export const DEFAULT_DOORBELL_CHANNEL = 'pa_events';
const HEAD_CACHE_LIMIT = 10_000;

interface PreparedRow {
  id: string;
  type: string;
  schemaVersion: number;
  occurredAt: string;
  data: JsonValue;
  metadata: { causationId: string | null; correlationId: string | null; traceparent: string | null; actor: Actor };
  digest: string;
  prevDigest: string | null;
}

interface StreamHead {
  version: number;
  digest: string | null;
  workspaceId: string | null;
}

const VERSION_TAKEN = 'events_stream_id_stream_version_key';
const EVENT_ID_TAKEN = 'events_event_id_key';

/**
 * Append-only event store on Postgres. Every append is one round trip to a SQL function that
 * checks the event it builds on, links each event's digest to the stream's previous one and
 * writes the events in order; the unique (stream, version) index turns a lost race into a
 * ConcurrencyError, and nothing of a failed append remains.
 */
export class PostgresEventStore {
  private readonly maxEventBytes: number;
  private readonly maxEventsPerAppend: number;
  private readonly doorbell: Doorbell | null;
  /** (stream, version) -> digest never changes, so a head cached at the expected version is exact. */
  private readonly heads = new Map<string, StreamHead>();

  constructor(
    private readonly pool: Pool,
    private readonly options: EventStoreOptions = {},
  ) {
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.maxEventsPerAppend = options.maxEventsPerAppend ?? 1_000;
    const channel = options.doorbellChannel === undefined ? DEFAULT_DOORBELL_CHANNEL : options.doorbellChannel;
    this.doorbell = channel ? new Doorbell(pool, channel) : null;
  }

  async append(stream: string, expectedVersion: ExpectedVersion, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    this.validateAppend(stream, expectedVersion, events, options.workspaceId);
    return withSpan(
      'eventstore.append',
      { attributes: { 'pa.stream': stream, 'pa.event_count': events.length, 'pa.workspace': options.workspaceId } },
      async (span) => {
        const result = await this.appendWithRetry(stream, expectedVersion, events, options);
        span.setAttribute('pa.stream_version', result.streamVersion);
        span.setAttribute('pa.global_position', result.lastGlobalPosition);
        if (!options.client) this.doorbell?.ring();
        return result;
      },
    );
  }

  /** Tells the relay that something committed; call after committing a transaction that appended. */
  ringDoorbell(): void {
    this.doorbell?.ring();
  }

  /**
   * Runs `work` in one transaction on a pooled connection, so state rows and the events it
   * appends with `{ client }` commit together, then tells the relay. A connection whose
   * rollback failed is in an unknown state and is destroyed rather than reused.
   */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      this.ringDoorbell();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async readStream(stream: string, options: { fromVersion?: number; limit?: number } = {}): Promise<EventEnvelope[]> {
    return withSpan('eventstore.read_stream', { attributes: { 'pa.stream': stream } }, async () => {
      const { rows } = await this.pool.query<EventRow>(
        `SELECT * FROM events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version LIMIT $3`,
        [stream, options.fromVersion ?? 1, options.limit ?? 10_000],
      );
      const events = rows.map(rowToEnvelope);
      // Read, decide, append: the append at the version just read needs no second read of the head.
      const last = events[events.length - 1];
      if (last && (this.heads.get(stream)?.version ?? 0) <= last.streamVersion) {
        this.rememberHead(stream, { version: last.streamVersion, digest: last.digest, workspaceId: last.workspaceId });
      }
      return events;
    });
  }

  /** Events after a global position, in position order (committed ones only, as of this read). */
  async readAll(options: { after?: number; limit?: number; workspaceId?: string } = {}): Promise<EventEnvelope[]> {
    return withSpan('eventstore.read_all', { attributes: { 'pa.after': options.after ?? 0 } }, async () => {
      const { rows } = await this.pool.query<EventRow>(
        `SELECT * FROM events WHERE global_position > $1 AND ($3::text IS NULL OR workspace_id = $3)
         ORDER BY global_position LIMIT $2`,
        [options.after ?? 0, options.limit ?? 1_000, options.workspaceId ?? null],
      );
      return rows.map(rowToEnvelope);
    });
  }

  async streamVersion(stream: string): Promise<number> {
    const { rows } = await this.pool.query<{ version: string }>(
      `SELECT coalesce(max(stream_version), 0) AS version FROM events WHERE stream_id = $1`,
      [stream],
    );
    return Number(rows[0]!.version);
  }

  async saveSnapshot(stream: string, name: string, snapshot: { streamVersion: number; schemaVersion: number; state: JsonValue }): Promise<void> {
    const issues = jsonIssues(snapshot.state, 'state');
    if (issues.length) throw new InvalidEventError('snapshot state is not plain JSON', issues);
    const state = canonicalJson(snapshot.state);
    await withSpan('eventstore.save_snapshot', { attributes: { 'pa.stream': stream } }, () =>
      this.pool.query(
        `INSERT INTO snapshots (stream_id, name, stream_version, schema_version, state, digest)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6)
         ON CONFLICT (stream_id, name) DO UPDATE
           SET stream_version = EXCLUDED.stream_version, schema_version = EXCLUDED.schema_version,
               state = EXCLUDED.state, digest = EXCLUDED.digest, created_at = now()
         WHERE snapshots.stream_version <= EXCLUDED.stream_version`,
        [stream, name, snapshot.streamVersion, snapshot.schemaVersion, state, sha256Hex(state)],
      ),
    );
  }

  async loadSnapshot<T extends JsonValue = JsonValue>(
    stream: string,
    name: string,
  ): Promise<{ streamVersion: number; schemaVersion: number; state: T; digest: string } | null> {
    const { rows } = await this.pool.query<{ stream_version: string; schema_version: number; state: T; digest: string }>(
      `SELECT stream_version, schema_version, state, digest FROM snapshots WHERE stream_id = $1 AND name = $2`,
      [stream, name],
    );
    const row = rows[0];
    return row ? { streamVersion: Number(row.stream_version), schemaVersion: row.schema_version, state: row.state, digest: row.digest } : null;
  }

  private async appendWithRetry(stream: string, expectedVersion: ExpectedVersion, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const executor = options.client ?? this.pool;
    // 'any' reads the head and appends at it; a writer that got in between makes us read again.
    for (let attempt = 0; ; attempt++) {
      const head = await this.headFor(stream, expectedVersion, options.workspaceId, executor);
      const prepared = this.prepare(stream, head, events, options.workspaceId);
      let row: { status: string; actual_version: string; first_position: string; last_position: string };
      try {
        row = await this.write(executor, stream, options.workspaceId, head, prepared.rows);
      } catch (error) {
        this.heads.delete(stream);
        if (!(error instanceof DatabaseError) || error.code !== '23505') throw error;
        if (error.constraint === EVENT_ID_TAKEN) {
          throw new InvalidEventError('append rejected', [{ path: 'events[].id', message: 'an event with this id is already stored' }]);
        }
        if (error.constraint !== VERSION_TAKEN || options.client) {
          // Inside the caller's transaction the failed statement aborted it: report, never retry.
          throw error.constraint === VERSION_TAKEN ? new ConcurrencyError(stream, expectedVersion, head.version + 1) : error;
        }
        if (expectedVersion === 'any' && attempt < 10) continue;
        throw new ConcurrencyError(stream, expectedVersion, await this.streamVersion(stream));
      }
      if (row.status === 'ok') {
        const first = Number(row.first_position);
        const version = Number(row.actual_version);
        this.rememberHead(stream, { version, digest: prepared.headDigest, workspaceId: options.workspaceId });
        return {
          streamVersion: version,
          firstGlobalPosition: first,
          lastGlobalPosition: Number(row.last_position),
          events: prepared.envelopes.map((envelope, index) => ({ ...envelope, globalPosition: first + index })),
        };
      }
      this.heads.delete(stream);
      if (row.status === 'wrong_workspace') throw wrongWorkspace();
      const retry = attempt < 10 && (row.status === 'stale_head' || expectedVersion === 'any');
      if (!retry) throw new ConcurrencyError(stream, expectedVersion, Number(row.actual_version));
    }
  }

  /**
   * One round trip. A single event (the common case) is a plain INSERT that builds on the
   * head only if the head is still there; several go through pa_append_events, which is also
   * asked when a single INSERT wrote nothing, since it tells the reasons apart. Statements are
   * named, so each is parsed and planned once per connection.
   */
  private async write(
    executor: Pool | PoolClient,
    stream: string,
    workspaceId: string,
    head: StreamHead,
    rows: PreparedRow[],
  ): Promise<{ status: string; actual_version: string; first_position: string; last_position: string }> {
    const viaFunction = async () => {
      const { rows: result } = await executor.query({
        name: 'pa_append_events',
        text: 'SELECT * FROM pa_append_events($1, $2, $3, $4, $5, $6::jsonb)',
        values: [stream, workspaceId, streamCategory(stream), head.version, head.digest, JSON.stringify(rows)],
      });
      return result[0];
    };
    if (rows.length > 1) return viaFunction();
    const event = rows[0]!;
    const values = [
      event.id, stream, head.version, event.type, event.schemaVersion, workspaceId, event.occurredAt,
      JSON.stringify(event.data), JSON.stringify(event.metadata), event.digest, head.digest,
    ];
    const inserted =
      head.version === 0
        ? await executor.query<{ global_position: string }>({
            name: 'pa_append_one_new',
            text: `WITH created AS (
                     INSERT INTO streams (stream_id, workspace_id, category) VALUES ($2, $6, $12)
                     ON CONFLICT (stream_id) DO NOTHING RETURNING 1)
                   INSERT INTO events (event_id, stream_id, stream_version, type, schema_version, workspace_id,
                                       occurred_at, data, metadata, digest, prev_digest)
                   SELECT $1::uuid, $2, $3::bigint + 1, $4, $5::int, $6, $7::timestamptz, $8::jsonb, $9::jsonb, $10, $11::char(64)
                     FROM created
                   RETURNING global_position`,
            values: [...values, streamCategory(stream)],
          })
        : await executor.query<{ global_position: string }>({
            name: 'pa_append_one',
            text: `INSERT INTO events (event_id, stream_id, stream_version, type, schema_version, workspace_id,
                                       occurred_at, data, metadata, digest, prev_digest)
                   SELECT $1::uuid, $2, $3::bigint + 1, $4, $5::int, $6, $7::timestamptz, $8::jsonb, $9::jsonb, $10, $11::char(64)
                    WHERE (SELECT h.workspace_id = $6 AND h.digest = $11::char(64)
                             FROM events h WHERE h.stream_id = $2 AND h.stream_version = $3::bigint)
                   RETURNING global_position`,
            values,
          });
    const position = inserted.rows[0]?.global_position;
    if (position !== undefined) {
      return { status: 'ok', actual_version: String(head.version + 1), first_position: position, last_position: position };
    }
    return viaFunction();
  }

  private async headFor(stream: string, expected: ExpectedVersion, workspaceId: string, executor: Pool | PoolClient): Promise<StreamHead> {
    if (expected === 'no_stream' || expected === 0) return { version: 0, digest: null, workspaceId: null };
    const cached = this.heads.get(stream);
    if (cached && (expected === 'any' || cached.version === expected)) return cached;
    const { rows } = await executor.query<{ stream_version: string; digest: string; workspace_id: string }>(
      `SELECT stream_version, digest, workspace_id FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1`,
      [stream],
    );
    const row = rows[0];
    const head = row
      ? { version: Number(row.stream_version), digest: row.digest, workspaceId: row.workspace_id }
      : { version: 0, digest: null, workspaceId: null };
    if (head.workspaceId !== null && head.workspaceId !== workspaceId) throw wrongWorkspace();
    if (expected !== 'any' && head.version !== expected) throw new ConcurrencyError(stream, expected, head.version);
    return head;
  }

  private rememberHead(stream: string, head: StreamHead): void {
    if (this.heads.size >= HEAD_CACHE_LIMIT) {
      const oldest = this.heads.keys().next().value;
      if (oldest !== undefined) this.heads.delete(oldest);
    }
    this.heads.delete(stream);
    this.heads.set(stream, head);
  }

  private prepare(stream: string, head: StreamHead, events: NewEvent[], workspaceId: string) {
    let prevDigest = head.digest;
    const envelopes: Omit<EventEnvelope, 'globalPosition'>[] = [];
    const rows = events.map((event, index) => {
      const { schemaVersion, data } = this.resolveSchema(event, index);
      const envelope = {
        id: event.id ?? newEventId(),
        type: event.type,
        schemaVersion,
        stream,
        streamVersion: head.version + index + 1,
        workspaceId,
        occurredAt: (event.occurredAt ?? new Date()).toISOString(),
        causationId: event.causationId ?? null,
        correlationId: event.correlationId ?? null,
        traceparent: event.traceparent === undefined ? currentTraceparent() : event.traceparent,
        actor: { kind: event.actor.kind, id: event.actor.id },
        data,
        prevDigest,
      };
      // One canonical rendering serves both the size limit and the digest.
      const canonical = canonicalJson(eventDigestBody(envelope));
      const bytes = Buffer.byteLength(canonical);
      if (bytes > this.maxEventBytes) throw new EventTooLargeError(index, bytes, this.maxEventBytes);
      const digest = sha256Hex(canonical);
      envelopes.push({ ...envelope, digest });
      prevDigest = digest;
      const metadata = { causationId: envelope.causationId, correlationId: envelope.correlationId, traceparent: envelope.traceparent, actor: envelope.actor };
      const row: PreparedRow = { id: envelope.id, type: envelope.type, schemaVersion, occurredAt: envelope.occurredAt, data, metadata, digest, prevDigest: envelope.prevDigest };
      return row;
    });
    return { rows, envelopes, headDigest: prevDigest as string };
  }

  private resolveSchema(event: NewEvent, index: number): { schemaVersion: number; data: JsonValue } {
    const registry = this.options.registry;
    if (!registry) return { schemaVersion: event.schemaVersion as number, data: event.data as JsonValue };
    try {
      const resolved = registry.validateForAppend(event.type, event.data);
      if (event.schemaVersion !== undefined && event.schemaVersion !== resolved.schemaVersion) {
        throw new InvalidEventError('events are appended at the latest schema version', [
          { path: `events[${index}].schemaVersion`, message: `is ${event.schemaVersion}, latest is ${resolved.schemaVersion}` },
        ]);
      }
      return resolved;
    } catch (error) {
      if (error instanceof InvalidEventError) throw error;
      throw new InvalidEventError(`events[${index}] rejected by the schema registry`, [
        { path: `events[${index}]`, message: error instanceof Error ? error.message : String(error) },
      ]);
    }
  }

  private validateAppend(stream: unknown, expectedVersion: unknown, events: unknown, workspaceId: unknown): void {
    const issues: ValidationIssue[] = [];
    if (typeof stream !== 'string' || !Identifiers.stream.test(stream)) {
      issues.push({ path: 'stream', message: 'must be "<category>-<id>" (lower-case category, id of letters, digits, _ : @ -)' });
    }
    if (typeof workspaceId !== 'string' || !Identifiers.workspace.test(workspaceId)) {
      issues.push({ path: 'workspaceId', message: 'must be 1-64 letters, digits, _ or -' });
    }
    if (!(expectedVersion === 'any' || expectedVersion === 'no_stream' || (Number.isSafeInteger(expectedVersion) && (expectedVersion as number) >= 0))) {
      issues.push({ path: 'expectedVersion', message: 'must be a non-negative integer, "no_stream" or "any"' });
    }
    if (!Array.isArray(events) || events.length === 0) {
      issues.push({ path: 'events', message: 'must be a non-empty array' });
    } else if (events.length > this.maxEventsPerAppend) {
      issues.push({ path: 'events', message: `at most ${this.maxEventsPerAppend} events per append` });
    } else {
      events.forEach((event: Partial<NewEvent> | null, index) => this.eventIssues(event, `events[${index}]`, issues));
    }
    if (issues.length) throw new InvalidEventError('append rejected', issues);
  }

  private eventIssues(event: Partial<NewEvent> | null, path: string, issues: ValidationIssue[]): void {
    if (typeof event !== 'object' || event === null) {
      issues.push({ path, message: 'must be an object' });
      return;
    }
    if (typeof event.type !== 'string' || !Identifiers.eventType.test(event.type)) {
      issues.push({ path: `${path}.type`, message: 'must be a dotted lower-case name such as run.started' });
    }
    if (event.id !== undefined && (typeof event.id !== 'string' || !Identifiers.uuid.test(event.id))) {
      issues.push({ path: `${path}.id`, message: 'must be a lower-case UUID' });
    }
    if (!this.options.registry && !(Number.isInteger(event.schemaVersion) && (event.schemaVersion as number) >= 1)) {
      issues.push({ path: `${path}.schemaVersion`, message: 'must be a positive integer' });
    }
    if (!event.actor || typeof event.actor.id !== 'string' || !event.actor.id || !(ACTOR_KINDS as readonly string[]).includes(event.actor.kind as string)) {
      issues.push({ path: `${path}.actor`, message: `must be {kind: ${ACTOR_KINDS.join('|')}, id}` });
    }
    if (event.data === undefined) {
      issues.push({ path: `${path}.data`, message: 'is required' });
    } else {
      jsonIssues(event.data, `${path}.data`, issues);
    }
    for (const key of ['causationId', 'correlationId', 'traceparent'] as const) {
      const value = event[key];
      if (value !== undefined && value !== null && (typeof value !== 'string' || value.length > 256)) {
        issues.push({ path: `${path}.${key}`, message: 'must be a string of at most 256 characters' });
      }
    }
    if (event.occurredAt !== undefined && !(event.occurredAt instanceof Date && !Number.isNaN(event.occurredAt.getTime()))) {
      issues.push({ path: `${path}.occurredAt`, message: 'must be a valid Date' });
    }
  }
}

function wrongWorkspace(): InvalidEventError {
  return new InvalidEventError('append rejected', [{ path: 'workspaceId', message: 'the stream belongs to another workspace' }]);
}
