import { DomainError, PolicyErrorCodes, type AttentionState } from '@packetagent/contracts';

export class AttentionNotFoundError extends DomainError {
  readonly code = PolicyErrorCodes.attentionNotFound;
  constructor(readonly attentionId: string) {
    super(`attention ${attentionId} not found`);
  }
}

/** The loser of a race (or a late answer) learns which outcome stands. */
export class AttentionAlreadyAnsweredError extends DomainError {
  readonly code = PolicyErrorCodes.attentionAlreadyAnswered;
  constructor(
    readonly attentionId: string,
    readonly state: Exclude<AttentionState, 'open'>,
  ) {
    super(`attention ${attentionId} is already ${state}`);
  }
}

/** The run is not known to policy yet (its admission has not reached it); retry shortly. */
export class UnknownRunError extends DomainError {
  readonly code = 'policy_run_unknown';
  override readonly retryable = true;

  constructor(runId: string) {
    super(`run ${runId} is not known to policy yet`);
  }
}

/** computerKeyGrant: the workspace has no computer of that name. */
export class ComputerNotFoundError extends DomainError {
  readonly code = PolicyErrorCodes.computerNotFound;
  constructor(computer: string) {
    super(`no computer "${computer}" is registered in this workspace`);
  }
}

/** computerKeyGrant: the computer has no key to grant (a `local` computer). */
export class ComputerWithoutKeyError extends DomainError {
  readonly code = PolicyErrorCodes.computerWithoutKey;
  constructor(computer: string) {
    super(`computer "${computer}" is not reached over ssh: it has no key to grant`);
  }
}

/** computerKeyGrant: the registry did not answer, or its record cannot be read; retry shortly. */
export class ComputerUnavailableError extends DomainError {
  readonly code = PolicyErrorCodes.computerUnavailable;
  override readonly retryable = true;
}

/** computerKeyGrant for mcp_list: listing would start the server's program on a computer whose policy asks first. */
export class ComputerListingRefusedError extends DomainError {
  readonly code = PolicyErrorCodes.computerListingRefused;
  constructor(computer: string, requirement: 'ask' | 'deny') {
    super(
      `listing the tools of an MCP server on computer "${computer}" starts its program there when the version is created, with no run and no person asked, ` +
        `and the computer's policy ${requirement === 'deny' ? 'denies commands' : 'asks a person before each command'}: allow commands on it (shell, write and network: allow), or run the server in the sandbox`,
    );
  }
}


/** The attention's rules name approvers, and the caller is not one (or did not say who they are: no role, no email). */
export class ApproverNotAllowedError extends DomainError {
  readonly code = PolicyErrorCodes.approverNotAllowed;
}

/** Under a quorum, the same approver's second approval is refused rather than counted twice. */
export class ApprovalAlreadyRecordedError extends DomainError {
  readonly code = PolicyErrorCodes.approvalAlreadyRecorded;
  constructor(attentionId: string) {
    super(`your approval of attention ${attentionId} is already recorded; the quorum needs another approver`);
  }
}

/** The edited arguments are not valid for the tool; the attention stays open. */
export class EditInvalidError extends DomainError {
  readonly code = PolicyErrorCodes.editInvalid;
}

/** The edited call is not covered by the run's grants; the attention stays open. */
export class EditNotGrantedError extends DomainError {
  readonly code = PolicyErrorCodes.editNotGranted;
}

/** This call cannot be approved with edited arguments; the attention stays open. */
export class EditNotSupportedError extends DomainError {
  readonly code = PolicyErrorCodes.editNotSupported;
}
