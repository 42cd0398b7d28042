import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { SupervisorModelCommands, type CheckModelProvidersRequest, type CheckModelProvidersResult, type DraftWorkerRequest, type DraftWorkerResult } from '@packetagent/contracts';
import { CheckModelProviders } from './check-model-providers';
import { DraftWorkerDefinition } from './draft-worker';

/** `supervisor.models.check` and `.draft_worker` over NATS request/reply, served by every supervisor replica. */
@Injectable()
export class SupervisorModelCommandHandlers {
  constructor(
    private readonly checkModelProviders: CheckModelProviders,
    private readonly draftWorkerDefinition: DraftWorkerDefinition,
  ) {}

  @OnCommand(SupervisorModelCommands.check)
  check(request: CheckModelProvidersRequest): Promise<CheckModelProvidersResult> {
    return this.checkModelProviders.execute(request);
  }

  @OnCommand(SupervisorModelCommands.draftWorker)
  draftWorker(request: DraftWorkerRequest): Promise<DraftWorkerResult> {
    return this.draftWorkerDefinition.execute(request);
  }
}
