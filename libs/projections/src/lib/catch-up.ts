import type { Pool } from 'pg';
import type { EventRegistry } from '@packetagent/contracts';
import { rowToEnvelope, type EventRow } from '@packetagent/eventstore';
import type { ProjectionWriter } from './applier';
import { decodeForProjection } from './decode';

export interface CatchUpResult {
  applied: number;
  gaps: number;
  position: number;
}

/**
 * Applies the stored events after the writer's lowest position up to `upTo`, in position order.
 * `upTo` must be a settled position (one the relay has published, or a projection's own
 * position): below it no transaction can still commit an event, so reading the table is exact.
 */
export async function catchUpFromStore(
  pool: Pool,
  registry: EventRegistry,
  writer: ProjectionWriter,
  upTo: number,
  options: { batchSize?: number; onBatch?: (result: CatchUpResult) => void } = {},
): Promise<CatchUpResult> {
  const batchSize = options.batchSize ?? 500;
  const positions = await writer.positions();
  let after = Math.min(...Object.values(positions));
  const result: CatchUpResult = { applied: 0, gaps: 0, position: after };
  while (after < upTo) {
    const { rows } = await pool.query<EventRow>(
      `SELECT e.global_position, e.event_id, e.stream_id, e.stream_version, e.type, e.schema_version, e.workspace_id, e.occurred_at,
              e.data, e.metadata, e.digest, e.prev_digest
         FROM events e WHERE e.global_position > $1 AND e.global_position <= $2 ORDER BY e.global_position LIMIT $3`,
      [after, upTo, batchSize],
    );
    if (rows.length === 0) break;
    const batch = rows.map((row) =>
      decodeForProjection(registry, () => rowToEnvelope(row), { globalPosition: Number(row.global_position), workspaceId: row.workspace_id, type: row.type }),
    );
    await writer.applyBatch(batch);
    for (const item of batch) {
      if (item.kind === 'event') result.applied++;
      else result.gaps++;
    }
    after = Number(rows.at(-1)!.global_position);
    result.position = after;
    options.onBatch?.(result);
  }
  return result;
}
