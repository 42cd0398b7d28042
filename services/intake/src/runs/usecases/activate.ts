import { Injectable } from '@nestjs/common';
import { ValidationError, type ActivationResult } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { RunAdmission, type ActivationRequest } from '../run-admission';

export interface Activate extends ActivationRequest {
  workspaceId: string;
  deploymentId: string | null;
}

/** One activation, from any source, addressed by deployment or by trigger. */
@Injectable()
export class ActivateUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async execute(command: Activate): Promise<ActivationResult> {
    if (!command.deploymentId && !command.triggerId) {
      throw new ValidationError('invalid activation', [{ path: 'deploymentId', message: 'name a deployment or a trigger' }]);
    }
    return this.store.transaction((client) => this.admission.admit(client, command, command));
  }
}
