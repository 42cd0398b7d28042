import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { CredentialMetadata } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { toMetadata, type LiveCredentialRow } from '../../credential.rows';

/** Metadata of a workspace's live credentials; the query never selects ciphertext. */
@Injectable()
export class ListCredentials {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(request: { workspaceId: string }): Promise<{ items: CredentialMetadata[] }> {
    const { rows } = await this.pool.query<Pick<LiveCredentialRow, 'name' | 'version' | 'key_id' | 'created_by' | 'created_at'>>(
      `SELECT name, version, key_id, created_by, created_at FROM vault.credentials
        WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY name`,
      [request.workspaceId],
    );
    return { items: rows.map(toMetadata) };
  }
}
