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
