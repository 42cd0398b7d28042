import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { SupervisorModelCommands, type CheckModelProvidersRequest, type CheckModelProvidersResult } from '@packetagent/contracts';
import { CheckModelProviders } from './check-model-providers';

/** `supervisor.models.check` over NATS request/reply, served by every supervisor replica. */
@Injectable()
export class SupervisorModelCommandHandlers {
  constructor(private readonly checkModelProviders: CheckModelProviders) {}

  @OnCommand(SupervisorModelCommands.check)
  check(request: CheckModelProvidersRequest): Promise<CheckModelProvidersResult> {
    return this.checkModelProviders.execute(request);
  }
}
