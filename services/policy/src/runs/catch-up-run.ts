import { Inject, Injectable } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { runStreamId, type EventRegistry } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
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
    return true;
  }
}
