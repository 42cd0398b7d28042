import { Inject, Injectable } from '@nestjs/common';
import type { RunSupervision } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { readSupervision, supervisionView } from '../../supervision.rows';

/** Where the supervisor has a run: unclaimed, driven, parked, over, or quarantined with the reason. */
@Injectable()
export class ReadSupervision {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(workspaceId: string, runId: string): Promise<RunSupervision> {
    const row = await readSupervision(this.pool, runId, workspaceId);
    return row ? supervisionView(row) : { runId, status: 'unclaimed', quarantineReason: null, waitingOn: null, claims: 0, updatedAt: null };
  }
}
