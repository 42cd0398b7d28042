import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { DomainError } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { FeedStore } from './feed-store';

export interface AcknowledgedCursor {
  position: number;
  /** Grows by one with every move; the ETag of the cursor. */
  revision: number;
}

/** An acknowledgement would move the cursor backwards. */
export class CursorRegressionError extends DomainError {
  readonly code = 'cursor_regression';
  constructor(current: number, requested: number) {
    super(`the acknowledged cursor is ${current}; ${requested} is before it, and a cursor never moves backwards`);
  }
}

/** An acknowledgement of a position no event has settled at yet. */
export class CursorAheadError extends DomainError {
  readonly code = 'cursor_ahead';
  constructor(requested: number, settled: number) {
    super(`${requested} is past the last settled position (${settled}): acknowledge only events received`);
  }
}

/** If-Match named another revision than the cursor's. */
export class CursorRevisionMismatchError extends DomainError {
  readonly code = 'cursor_revision_mismatch';
  constructor(expected: number, current: number) {
    super(`If-Match names revision ${expected} and the cursor is at revision ${current}: read it again (GET /api/v1/packetade/events/ack)`);
  }
}

/**
 * Each actor's acknowledged position in its feed. Moving it is idempotent (the same cursor again
 * changes nothing) and monotonic (an earlier one is refused); If-Match makes it conditional on
 * the revision the client last saw, so two clients of one actor cannot undo each other.
 */
@Injectable()
export class FeedAcknowledgements {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly feed: FeedStore,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  async current(workspaceId: string, actorName: string): Promise<AcknowledgedCursor> {
    const { rows } = await this.pool.query<{ position: string; revision: string }>(
      `SELECT position, revision FROM identity.packetade_feed_cursors WHERE workspace_id = $1 AND actor_name = $2`,
      [workspaceId, actorName],
    );
    return rows[0] ? { position: Number(rows[0].position), revision: Number(rows[0].revision) } : { position: 0, revision: 0 };
  }

  async acknowledge(workspaceId: string, actorName: string, position: number, ifMatch: number | null): Promise<AcknowledgedCursor> {
    const settled = await this.feed.settledPosition();
    if (position > settled) throw new CursorAheadError(position, settled);
    return this.store.transaction(async (client) => {
      // Revision 0 at position 0 is "never acknowledged": created on first use, so the first acknowledgement locks a row like any other.
      await client.query(
        `INSERT INTO identity.packetade_feed_cursors (workspace_id, actor_name, position, revision) VALUES ($1, $2, 0, 0)
         ON CONFLICT (workspace_id, actor_name) DO NOTHING`,
        [workspaceId, actorName],
      );
      const { rows } = await client.query<{ position: string; revision: string }>(
        `SELECT position, revision FROM identity.packetade_feed_cursors WHERE workspace_id = $1 AND actor_name = $2 FOR UPDATE`,
        [workspaceId, actorName],
      );
      const current = { position: Number(rows[0]!.position), revision: Number(rows[0]!.revision) };
      if (ifMatch !== null && ifMatch !== current.revision) throw new CursorRevisionMismatchError(ifMatch, current.revision);
      if (position < current.position) throw new CursorRegressionError(current.position, position);
      if (position === current.position) return current;
      const revision = current.revision + 1;
      await client.query(
        `UPDATE identity.packetade_feed_cursors SET position = $3, revision = $4, updated_at = now() WHERE workspace_id = $1 AND actor_name = $2`,
        [workspaceId, actorName, position, revision],
      );
      return { position, revision };
    });
  }
}
