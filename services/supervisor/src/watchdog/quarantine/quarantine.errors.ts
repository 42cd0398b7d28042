import { DomainError, SupervisorErrorCodes } from '@packetagent/contracts';

/** No such run in the workspace; another workspace's run answers the same, so its existence does not leak. */
export class RunNotFoundError extends DomainError {
  readonly code = SupervisorErrorCodes.runNotFound;
  constructor(runId: string) {
    super(`no run ${runId} in this workspace`);
  }
}

export class RunNotQuarantinedError extends DomainError {
  readonly code = SupervisorErrorCodes.runNotQuarantined;
  constructor(runId: string, status: string) {
    super(`run ${runId} is ${status}, not quarantined: only a quarantined run can be released or ended`);
  }
}
