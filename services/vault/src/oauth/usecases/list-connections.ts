import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { OAuthConnection } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { connectionView, type ConnectionFacts } from '../connection';
import { readConnectionRows } from '../oauth.rows';

/** A workspace's OAuth connections and how each stands; read from the facts kept beside the ciphertext. */
@Injectable()
export class ListConnections {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(request: { workspaceId: string }): Promise<{ items: OAuthConnection[] }> {
    const rows = await readConnectionRows(this.pool, request.workspaceId);
    return { items: rows.map((row) => connectionView({ name: row.name, version: row.version, facts: row.oauth as ConnectionFacts, refreshError: row.refresh_error })) };
  }
}
