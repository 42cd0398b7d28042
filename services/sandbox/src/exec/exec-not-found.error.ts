import { DomainError, SandboxErrorCodes } from '@packetagent/contracts';

/** No such exec in the workspace: another workspace's exec answers the same. */
export class ExecNotFoundError extends DomainError {
  readonly code = SandboxErrorCodes.execNotFound;
  constructor(readonly execId: string) {
    super(`no exec ${execId} in this workspace`);
  }
}
