import { Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import { ApplyDeploymentEvent } from './apply-deployment-event';

/** Deployment events (`deployment-<id>` streams), shared by every policy replica. */
@Injectable()
export class DeploymentEventsConsumer {
  constructor(private readonly applyDeploymentEvent: ApplyDeploymentEvent) {}

  @OnEvent({ durable: 'policy-deployments', filter: '*.deployment.>' })
  async onDeploymentEvent(event: DecodedEvent): Promise<void> {
    await this.applyDeploymentEvent.execute(event);
  }
}
