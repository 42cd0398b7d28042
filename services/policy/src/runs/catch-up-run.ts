import { Inject, Injectable } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { runStreamId, type EventRegistry, type RunExecutionEventData } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { ApplyDeploymentEvent } from '../deployments/apply-deployment-event';
import { ApplyRunAdmitted } from './apply-run-admitted';

/** Admission comes first in a run's stream: a deferred run has its admission within the first few events. */
const ADMISSION_WINDOW = 4;

/**
 * Policy learns of runs and deployments from the bus, a moment after they commit. A decision
 * asked for in that moment reads them from the event store instead, through the same idempotent
 * appliers the consumers use, so a run admitted is a run policy knows: there is no window in
 * which an admitted run reads as unknown.
 */
@Injectable()
export class CatchUpRun {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    private readonly applyRunAdmitted: ApplyRunAdmitted,
    private readonly applyDeploymentEvent: ApplyDeploymentEvent,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  /** True when the run's admission (and its deployment's events) are now applied. */
  async execute(workspaceId: string, runId: string): Promise<boolean> {
    const head = await this.store.readStream(runStreamId(runId), { fromVersion: 1, limit: ADMISSION_WINDOW });
    const admitted = head.find((event) => event.type === 'run.admitted');
    if (!admitted || admitted.workspaceId !== workspaceId) return false;
    const admission = this.registry.decode(admitted);
    await this.applyRunAdmitted.execute(admission);
    const { deploymentId } = admission.data as { deploymentId: string };
    for (const envelope of await this.store.readStream(`deployment-${deploymentId}`, { fromVersion: 1 })) {
      await this.applyDeploymentEvent.execute(this.registry.decode(envelope));
    }
    await this.applyMigrations(runId);
    return true;
  }

  /** A migrated run decides under its new version's grants: each move applies once, in the run's order. */
  private async applyMigrations(runId: string): Promise<void> {
    for (const envelope of await this.store.readStream(runStreamId(runId), { fromVersion: 1 })) {
      if (envelope.type !== 'run.migrated') continue;
      const { from, to } = this.registry.decode(envelope).data as RunExecutionEventData<'run.migrated'>;
      await this.pool.query(
        `UPDATE policy.runs SET version_digest = $2, effective_digest = $3 WHERE run_id = $1 AND effective_digest = $4`,
        [runId, to.digest, to.effectiveDigest, from.effectiveDigest],
      );
    }
  }
}
