import { Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import { ApplyDeploymentEvent } from './usecases/apply-deployment-event/apply-deployment-event';

/** Deployment events (`deployment-<id>` streams) from PA_EVENTS, shared by every scheduler replica. */
@Injectable()
export class DeploymentEventsConsumer {
  constructor(private readonly applyDeploymentEvent: ApplyDeploymentEvent) {}

  @OnEvent({ durable: 'scheduler-deployments', filter: '*.deployment.>' })
  async onDeploymentEvent(event: DecodedEvent): Promise<void> {
    await this.applyDeploymentEvent.execute(event);
  }
}
