import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { VersionSchema, WorkerSummarySchema } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { decodeCursor, encodeCursor } from '../../shared/database';
import { NotFoundError } from '../../shared/errors';
import { versionView, workerView, type VersionRow, type WorkerRow } from '../worker.rows';

type Worker = z.input<typeof WorkerSummarySchema>;
type Version = z.input<typeof VersionSchema>;

@Injectable()
export class ReadWorkersUseCase {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async list(query: { workspaceId: string; cursor: string | null; limit: number }): Promise<{ items: Worker[]; nextCursor: string | null }> {
    const after = decodeCursor(query.cursor);
    const { rows } = await this.pool.query<WorkerRow>(
      `SELECT * FROM intake.workers WHERE workspace_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`,
      [query.workspaceId, after, query.limit + 1],
    );
    const items = rows.slice(0, query.limit);
    const last = items[items.length - 1];
    return { items: items.map(workerView), nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : null };
  }

  async get(workspaceId: string, workerId: string): Promise<Worker> {
    const { rows } = await this.pool.query<WorkerRow>('SELECT * FROM intake.workers WHERE id = $1 AND workspace_id = $2', [workerId, workspaceId]);
    if (!rows[0]) throw new NotFoundError('worker', workerId);
    return workerView(rows[0]);
  }

  async versions(workspaceId: string, workerId: string): Promise<{ items: Omit<Version, 'definition'>[] }> {
    await this.get(workspaceId, workerId);
    const { rows } = await this.pool.query<VersionRow>(
      'SELECT worker_id, version, digest, NULL AS definition, NULL AS source_text, NULL AS source_format, created_at FROM intake.versions WHERE worker_id = $1 ORDER BY version DESC',
      [workerId],
    );
    return { items: rows.map((row) => { const { definition: _omitted, source: _unread, ...rest } = versionView(row); return rest; }) };
  }

  async version(workspaceId: string, workerId: string, version: number): Promise<Version> {
    const { rows } = await this.pool.query<VersionRow>(
      'SELECT * FROM intake.versions WHERE worker_id = $1 AND workspace_id = $2 AND version = $3',
      [workerId, workspaceId, version],
    );
    if (!rows[0]) throw new NotFoundError(`version ${version} of worker`, workerId);
    return versionView(rows[0]);
  }
}
