import { DomainError, ProjectorErrorCodes } from '@packetagent/contracts';

export class RunNotFoundError extends DomainError {
  readonly code = ProjectorErrorCodes.runNotFound;
  constructor(readonly runId: string) {
    super(`run ${runId} not found`);
  }
}
