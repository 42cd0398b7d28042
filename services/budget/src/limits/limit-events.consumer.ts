import { Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import { ApplyLimitsEvent } from './usecases/apply-limits-event/apply-limits-event';

/**
 * Deployment limits and run admissions from PA_EVENTS, one durable consumer each, shared by
 * every budget replica. Their relative order does not matter: a run's scopes are created on
 * its first reservation, once both have arrived.
 */
@Injectable()
export class LimitEventsConsumer {
  constructor(private readonly applyLimitsEvent: ApplyLimitsEvent) {}

  @OnEvent({ durable: 'budget-deployments', filter: '*.deployment.deployment.>' })
  async onDeploymentEvent(event: DecodedEvent): Promise<void> {
    await this.applyLimitsEvent.execute(event);
  }

  @OnEvent({ durable: 'budget-runs', filter: '*.run.run.admitted' })
  async onRunAdmitted(event: DecodedEvent): Promise<void> {
    await this.applyLimitsEvent.execute(event);
  }
}
