import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { JsonValue, RunState, RunView } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { decodeCursor, encodeCursor } from '../../shared/database';
import { NotFoundError } from '../../shared/errors';
import { runView, type RunRow } from '../run.rows';

@Injectable()
export class ReadRunsUseCase {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async get(workspaceId: string, runId: string): Promise<RunView> {
    const { rows } = await this.pool.query<RunRow>('SELECT * FROM intake.runs WHERE id = $1 AND workspace_id = $2', [runId, workspaceId]);
    if (!rows[0]) throw new NotFoundError('run', runId);
    return runView(rows[0]);
  }

  /** A stored activation input; the workspace must match, so another tenant's id finds nothing. */
  async payload(workspaceId: string, payloadId: string): Promise<{ payloadId: string; digest: string; bytes: number; content: JsonValue }> {
    const { rows } = await this.pool.query<{ id: string; digest: string; bytes: number; content: JsonValue }>(
      'SELECT id, digest, bytes, content FROM intake.payloads WHERE id = $1 AND workspace_id = $2',
      [payloadId, workspaceId],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError('payload', payloadId);
    return { payloadId: row.id, digest: row.digest.trim(), bytes: Number(row.bytes), content: row.content };
  }

  async list(query: {
    workspaceId: string;
    deploymentId: string | null;
    state: RunState | null;
    cursor: string | null;
    limit: number;
  }): Promise<{ items: RunView[]; nextCursor: string | null }> {
    const after = decodeCursor(query.cursor);
    const { rows } = await this.pool.query<RunRow>(
      `SELECT * FROM intake.runs
        WHERE workspace_id = $1 AND ($2::text IS NULL OR deployment_id = $2) AND ($3::text IS NULL OR state = $3)
          AND ($4::text IS NULL OR id < $4)
        ORDER BY id DESC LIMIT $5`,
      [query.workspaceId, query.deploymentId, query.state, after, query.limit + 1],
    );
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    return { items: items.map(runView), nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : null };
  }
}
