import { DomainError } from '@packetagent/contracts';

/**
 * The event is ahead of what the projection has applied: a committed event between the
 * projection's position and this one has not been applied. Retryable: once the missing event is
 * applied (redelivered, or read from the store), this one applies.
 */
export class ProjectionOutOfOrderError extends DomainError {
  readonly code = 'projection_out_of_order';
  override readonly retryable = true;
  constructor(
    readonly projection: string,
    readonly appliedPosition: number,
    readonly missingPosition: number,
    readonly eventPosition: number,
  ) {
    super(`projection ${projection} is at position ${appliedPosition}; event ${eventPosition} skips committed event ${missingPosition}`);
  }
}

export class UnknownProjectionError extends DomainError {
  readonly code = 'unknown_projection';
  constructor(readonly projection: string, known: readonly string[]) {
    super(`no projection named "${projection}" (known: ${known.join(', ')})`);
  }
}

/** Another rebuild holds the shadow schema. */
export class RebuildInProgressError extends DomainError {
  readonly code = 'rebuild_in_progress';
  override readonly retryable = true;
  constructor() {
    super('another projection rebuild is running');
  }
}
