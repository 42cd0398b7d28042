import type { Pool, PoolClient } from 'pg';
import type { DecodedEvent } from '@packetagent/contracts';
import type { Decoded } from './decode';
import { ProjectionOutOfOrderError } from './errors';
import type { Projection, RowChange } from './projection';
import { fromDatabase, identifier, qualified, toDatabase, type TableSpec } from './table';

/** The schema the live projector writes and readers read. */
export const PROJECTOR_SCHEMA = 'projector';

/**
 * Transaction-level advisory lock every apply takes, and a rebuild's swap too: while a swap
 * holds it, no event moves a projection, so the swapped-in tables are exactly as far along as
 * the ones they replace.
 */
export const PROJECTOR_LOCK = { namespace: 0x5052_4a54, key: 1 } as const; // "PRJT"

export type ApplyOutcome = 'applied' | 'duplicate';

/** An event the projector could not decode, kept so that it is never skipped silently. */
export interface Gap {
  /** Null only when the delivery carried no position at all. */
  globalPosition: number | null;
  workspaceId: string | null;
  stream: string | null;
  type: string | null;
  code: string;
  reason: string;
}

/**
 * Applies events to projections in `schema`, exactly once each. Every projection keeps the last
 * global position it applied, written in the same transaction as its rows:
 *  - an event at or below that position is a redelivery, and changes nothing;
 *  - an event above it applies only if no committed event lies between the two. The relay
 *    publishes in position order and only once every lower position is settled (committed or
 *    proven rolled back), so a committed event in between is one this projection missed: the
 *    event is refused (ProjectionOutOfOrderError) and nothing is written.
 */
export class ProjectionWriter {
  readonly schema: string;
  private readonly lock: boolean;

  /**
   * `schema` defaults to the live one; `lock` (default: only for the live schema) takes
   * PROJECTOR_LOCK in each transaction. A rebuild's shadow writer must not take it: the swap
   * holds it while the shadow catches up.
   */
  constructor(
    private readonly pool: Pool,
    readonly projections: readonly Projection[],
    options: { schema?: string; lock?: boolean } = {},
  ) {
    this.schema = identifier(options.schema ?? PROJECTOR_SCHEMA);
    this.lock = options.lock ?? this.schema === PROJECTOR_SCHEMA;
  }

  /** Applies the event to every projection not yet past it, in one transaction. */
  async apply(event: DecodedEvent): Promise<Record<string, ApplyOutcome>> {
    return this.inTransaction((client) => this.applyIn(client, event));
  }

  /**
   * Records an event that could not be decoded and moves every projection past it, under the
   * same ordering rule as apply: the gap is the projections' record of that position.
   */
  async recordGap(gap: Gap): Promise<'recorded' | 'duplicate'> {
    return this.inTransaction((client) => this.recordGapIn(client, gap));
  }

  /**
   * Applies a run of the store's events (and gaps), consecutive and in position order, in one
   * transaction: the ordering check is made once, against the first; the positions are written
   * once, at the end. For catch-up and rebuild; all or nothing.
   */
  async applyBatch(items: readonly Decoded[]): Promise<void> {
    const positionOf = (item: Decoded) => (item.kind === 'event' ? item.event.globalPosition : item.gap.globalPosition);
    const first = items.map(positionOf).find((position) => position !== null);
    await this.inTransaction(async (client) => {
      const at = first === undefined ? new Map<string, number>() : await this.duePositions(client, first);
      const moved = new Set<string>();
      for (const item of items) {
        if (item.kind === 'gap') await insertGap(client, item.gap);
        const position = positionOf(item);
        if (position === null) continue;
        for (const projection of this.projections) {
          const applied = at.get(projection.name);
          if (applied === undefined || applied >= position) continue;
          if (item.kind === 'event') {
            for (const change of projection.changes(item.event)) await applyChange(client, this.schema, projection, change);
          }
          at.set(projection.name, position);
          moved.add(projection.name);
        }
      }
      for (const name of moved) await this.advance(client, [name], at.get(name)!);
    });
  }

  private async applyIn(client: PoolClient, event: DecodedEvent): Promise<Record<string, ApplyOutcome>> {
    const due = await this.duePositions(client, event.globalPosition);
    const outcomes: Record<string, ApplyOutcome> = {};
    for (const projection of this.projections) {
      if (!due.has(projection.name)) {
        outcomes[projection.name] = 'duplicate';
        continue;
      }
      for (const change of projection.changes(event)) await applyChange(client, this.schema, projection, change);
      outcomes[projection.name] = 'applied';
    }
    await this.advance(client, [...due.keys()], event.globalPosition);
    return outcomes;
  }

  private async recordGapIn(client: PoolClient, gap: Gap): Promise<'recorded' | 'duplicate'> {
    if (gap.globalPosition === null) {
      await insertGap(client, gap);
      return 'recorded';
    }
    const due = await this.duePositions(client, gap.globalPosition);
    await insertGap(client, gap);
    if (due.size === 0) return 'duplicate';
    await this.advance(client, [...due.keys()], gap.globalPosition);
    return 'recorded';
  }

  /** Last applied position of each projection (0 before the first event). */
  async positions(client: Pool | PoolClient = this.pool): Promise<Record<string, number>> {
    const { rows } = await client.query<{ projection: string; position: string }>(
      `SELECT projection, position FROM ${qualified(this.schema, 'checkpoints')} WHERE projection = ANY($1)`,
      [this.projections.map((projection) => projection.name)],
    );
    const positions: Record<string, number> = Object.fromEntries(this.projections.map((projection) => [projection.name, 0]));
    for (const row of rows) positions[row.projection] = Number(row.position);
    return positions;
  }

  private async inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      if (this.lock) await client.query('SELECT pg_advisory_xact_lock($1, $2)', [PROJECTOR_LOCK.namespace, PROJECTOR_LOCK.key]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Positions of the projections that have not applied `position` yet; throws if one would skip an event. */
  private async duePositions(client: PoolClient, position: number): Promise<Map<string, number>> {
    const checkpoints = qualified(this.schema, 'checkpoints');
    const names = this.projections.map((projection) => projection.name);
    await client.query(`INSERT INTO ${checkpoints} (projection, position) SELECT unnest($1::text[]), 0 ON CONFLICT (projection) DO NOTHING`, [names]);
    const { rows } = await client.query<{ projection: string; position: string }>(
      `SELECT projection, position FROM ${checkpoints} WHERE projection = ANY($1) FOR UPDATE`,
      [names],
    );
    const due = new Map(rows.map((row) => [row.projection, Number(row.position)] as const).filter(([, at]) => at < position));
    if (due.size === 0) return due;
    const lowest = Math.min(...due.values());
    const { rows: missed } = await client.query<{ position: string | null }>(
      `SELECT min(global_position) AS position FROM events WHERE global_position > $1 AND global_position < $2`,
      [lowest, position],
    );
    const missing = missed[0]?.position;
    if (missing !== null && missing !== undefined) {
      const behind = [...due.entries()].find(([, at]) => at === lowest)![0];
      throw new ProjectionOutOfOrderError(behind, lowest, Number(missing), position);
    }
    return due;
  }

  private async advance(client: PoolClient, names: string[], position: number): Promise<void> {
    if (names.length === 0) return;
    await client.query(`UPDATE ${qualified(this.schema, 'checkpoints')} SET position = $2, updated_at = now() WHERE projection = ANY($1)`, [names, position]);
  }
}

function tableOf(projection: Projection, name: string): TableSpec {
  const table = projection.tables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`projection ${projection.name} has no table ${name}`);
  return table;
}

/** Reads the row (locked), runs the pure evolve, and writes back what it returns. */
async function applyChange(client: PoolClient, schema: string, projection: Projection, change: RowChange): Promise<void> {
  const table = tableOf(projection, change.table);
  const target = qualified(schema, table.name);
  const keyColumns = table.primaryKey;
  const keyValues = keyColumns.map((column) => change.key[column]);
  const where = keyColumns.map((column, index) => `${identifier(column)} = $${index + 1}`).join(' AND ');
  const { rows } = await client.query<Record<string, unknown>>(`SELECT * FROM ${target} WHERE ${where} FOR UPDATE`, keyValues);
  const current = rows[0] ? fromDatabase(table, rows[0]) : null;
  const next = change.evolve(current);
  if (next === current) return;
  if (next === null) {
    await client.query(`DELETE FROM ${target} WHERE ${where}`, keyValues);
    return;
  }
  const columns = table.columns.map((column) => identifier(column.name));
  const values = table.columns.map((column) => toDatabase(column, next[column.name]));
  const updates = columns.filter((column) => !keyColumns.includes(column)).map((column) => `${column} = EXCLUDED.${column}`);
  await client.query(
    `INSERT INTO ${target} (${columns.join(', ')}) VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')})
     ON CONFLICT (${keyColumns.map(identifier).join(', ')}) DO ${updates.length ? `UPDATE SET ${updates.join(', ')}` : 'NOTHING'}`,
    values,
  );
}

async function insertGap(client: PoolClient, gap: Gap): Promise<void> {
  await client.query(
    `INSERT INTO ${PROJECTOR_SCHEMA}.gaps (global_position, workspace_id, stream_id, type, code, reason) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (global_position) DO NOTHING`,
    [gap.globalPosition, gap.workspaceId, gap.stream, gap.type, gap.code, gap.reason.slice(0, 1_000)],
  );
}
