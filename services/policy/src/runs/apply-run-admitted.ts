import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { DecodedEvent, IntakeEventData } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';

/**
 * Records which deployment and pinned digests a run was admitted under. A run is admitted once,
 * so the first record stands and a redelivery changes nothing.
 */
@Injectable()
export class ApplyRunAdmitted {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(event: DecodedEvent): Promise<'applied' | 'ignored'> {
    if (event.type !== 'run.admitted') return 'ignored';
    const data = event.data as IntakeEventData<'run.admitted'>;
    const { rowCount } = await this.pool.query(
      `INSERT INTO policy.runs (run_id, workspace_id, deployment_id, version_digest, effective_digest)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id) DO NOTHING`,
      [data.runId, event.workspaceId, data.deploymentId, data.digest, data.effectiveDigest],
    );
    return rowCount ? 'applied' : 'ignored';
  }
}
