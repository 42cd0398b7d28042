import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { EventEnvelope } from '@packetagent/contracts';
import { PG_POOL, rowToEnvelope, type EventRow } from '@packetagent/eventstore';
import { LIVE_OPTIONS, type LiveOptions } from '../../live/live.options';

/**
 * Reads an actor's feed from the event store: the events of its deployments' streams, and of
 * the run and attention streams whose first event names one of them (`run.admitted`,
 * `attention.requested`), so runs started by any trigger of the deployment are in it. Only up
 * to a settled position: every event at or below it is committed, so a page never skips an
 * event that commits later at a lower position.
 */
@Injectable()
export class FeedStore {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(LIVE_OPTIONS) private readonly options: LiveOptions,
  ) {}

  /** The relay's cursor: every position at or below it is committed or will never be. */
  async settledPosition(): Promise<number> {
    const { rows } = await this.pool.query<{ position: string }>(`SELECT position FROM relay_cursors WHERE name = $1`, [this.options.relayName]);
    return Number(rows[0]?.position ?? 0);
  }

  /** The actor's events in (after, upTo], in position order, at most `limit`. */
  async read(workspaceId: string, actorName: string, after: number, upTo: number, limit: number): Promise<EventEnvelope[]> {
    if (upTo <= after) return [];
    const { rows } = await this.pool.query<EventRow>(
      `WITH owned AS (
         SELECT deployment_id FROM identity.packetade_deployments WHERE workspace_id = $1 AND actor_name = $2
       )
       SELECT e.* FROM events e
        WHERE e.workspace_id = $1 AND e.global_position > $3 AND e.global_position <= $4
          AND (
            (e.stream_id LIKE 'deployment-%' AND substr(e.stream_id, 12) IN (SELECT deployment_id FROM owned))
            OR ((e.stream_id LIKE 'run-%' OR e.stream_id LIKE 'attention-%')
                AND EXISTS (SELECT 1 FROM events f
                             WHERE f.stream_id = e.stream_id AND f.stream_version = 1
                               AND f.data->>'deploymentId' IN (SELECT deployment_id FROM owned)))
          )
        ORDER BY e.global_position
        LIMIT $5`,
      [workspaceId, actorName, after, upTo, limit],
    );
    return rows.map(rowToEnvelope);
  }
}
