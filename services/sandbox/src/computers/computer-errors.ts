import { ComputerErrorCodes, DomainError, ValidationError } from '@packetagent/contracts';

export class ComputerNotFoundError extends DomainError {
  readonly code = ComputerErrorCodes.notFound;
  constructor(name: string) {
    super(`no computer named ${name} is registered in this workspace`);
  }
}

/** Registration of an ssh computer whose host key nobody pinned: the key it presented is in the issue. */
export class HostKeyUnpinnedError extends ValidationError {
  override readonly code = ComputerErrorCodes.hostKeyUnpinned;
  constructor(
    readonly host: string,
    readonly presented: string,
    keyType: string,
  ) {
    super(`${host} presented the ${keyType} host key ${presented}; nothing is pinned. Check it on the computer (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub) and send it as acceptHostKey to pin it`, [
      { path: 'acceptHostKey', message: `the host presented ${presented} (${keyType}); confirm it to pin it` },
    ]);
  }
}

export class HostKeyChangedError extends DomainError {
  readonly code = ComputerErrorCodes.hostKeyChanged;
}

export class ComputerRecordUnreadableError extends DomainError {
  readonly code = ComputerErrorCodes.recordUnreadable;
}

export class ComputerVersionConflictError extends DomainError {
  readonly code = ComputerErrorCodes.versionConflict;
}

export class ComputerUnreachableError extends DomainError {
  readonly code = ComputerErrorCodes.unreachable;
}
