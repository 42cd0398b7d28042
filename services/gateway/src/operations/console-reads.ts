import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { readRunFacts, readRunTrends, readWorkspaceNames, type TrendBucket } from '@packetagent/projections';

/**
 * What the console reads beside the projector's commands: names for ids, run facts for the
 * runs list, trends for the overview. Read models from the projector's schema and the
 * gateway's own identity tables, in the database every service shares.
 */
@Injectable()
export class ConsoleReads {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async directory(workspaceId: string) {
    const [names, users, apiKeys] = await Promise.all([
      readWorkspaceNames(this.pool, workspaceId),
      this.pool.query<{ id: string; email: string; role: string }>(
        `SELECT u.id, u.email, m.role FROM identity.memberships m JOIN identity.users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY u.email`,
        [workspaceId],
      ),
      this.pool.query<{ id: string; name: string }>(`SELECT id, name FROM identity.api_keys WHERE workspace_id = $1 ORDER BY created_at`, [workspaceId]),
    ]);
    return { ...names, users: users.rows, apiKeys: apiKeys.rows };
  }

  async runFacts(workspaceId: string, runIds: readonly string[]) {
    return { items: await readRunFacts(this.pool, workspaceId, runIds) };
  }

  trends(workspaceId: string, bucket: TrendBucket) {
    return readRunTrends(this.pool, workspaceId, bucket);
  }

  async setupComplete(): Promise<boolean> {
    const { rows } = await this.pool.query<{ complete: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM identity.setup WHERE consumed_at IS NOT NULL) OR EXISTS (SELECT 1 FROM identity.memberships WHERE role = 'owner') AS complete`,
    );
    return rows[0]?.complete ?? false;
  }
}
