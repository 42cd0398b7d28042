import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PayloadStore, PG_POOL, type EventRow } from '@packetagent/eventstore';
import { assertRunInWorkspace } from '../../audit/run-streams';
import { resolvePage, type PayloadMode } from '../../payloads/inline-payloads';
import { decodeEventCursor, encodeEventCursor } from '../event-cursor';
import type { z } from 'zod';
import type { RunEventsPage } from '../live.dto';

/**
 * Pages a run's events by stream version. A stream's versions commit in order (each append
 * builds on the head before it), so a page never skips an event that commits later, and
 * paging stays complete and duplicate-free while the run keeps appending. Payload references
 * are resolved to their verified content unless the caller asks for them as stored; a page
 * whose payloads would not fit ends early, with a cursor.
 */
@Injectable()
export class PageRunEvents {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly payloads: PayloadStore,
  ) {}

  async execute(query: { workspaceId: string; runId: string; after?: string; limit: number; payloads?: PayloadMode }): Promise<z.infer<typeof RunEventsPage>> {
    const afterVersion = decodeEventCursor(query.after);
    const stream = await assertRunInWorkspace(this.pool, query.workspaceId, query.runId);
    const { rows } = await this.pool.query<EventRow>(
      `SELECT * FROM events WHERE stream_id = $1 AND workspace_id = $2 AND stream_version > $3 ORDER BY stream_version LIMIT $4`,
      [stream, query.workspaceId, afterVersion, query.limit + 1],
    );
    const events = rows.map((row) => ({
      id: row.event_id,
      position: Number(row.global_position),
      type: row.type,
      streamVersion: Number(row.stream_version),
      occurredAt: row.occurred_at.toISOString(),
      actor: row.metadata.actor,
      data: row.data,
    }));
    const page = await resolvePage(this.payloads, query.workspaceId, events, { limit: query.limit, mode: query.payloads ?? 'inline' });
    const last = page.items[page.items.length - 1];
    const more = page.cut || rows.length > query.limit;
    return { items: page.items, nextCursor: more && last ? encodeEventCursor(last.streamVersion) : null };
  }
}
