import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { AttentionState, AttentionView } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { AttentionNotFoundError } from '../../shared/errors';
import { attentionView, readAttention, type AttentionRow } from '../attention.rows';

@Injectable()
export class ReadAttention {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async get(workspaceId: string, attentionId: string): Promise<AttentionView> {
    const row = await readAttention(this.pool, attentionId);
    // Another workspace's record answers exactly as a missing one.
    if (!row || row.workspace_id !== workspaceId) throw new AttentionNotFoundError(attentionId);
    return attentionView(row);
  }

  /** Newest first. */
  async list(workspaceId: string, state: AttentionState | null, limit: number): Promise<AttentionView[]> {
    const { rows } = await this.pool.query<AttentionRow>(
      `SELECT * FROM policy.attention WHERE workspace_id = $1 AND ($2::text IS NULL OR state = $2)
        ORDER BY created_at DESC, attention_id DESC LIMIT $3`,
      [workspaceId, state, limit],
    );
    return rows.map(attentionView);
  }
}
