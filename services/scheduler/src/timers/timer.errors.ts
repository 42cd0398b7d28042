import { DomainError, TimerErrorCodes } from '@packetagent/contracts';

export class TimerNotFoundError extends DomainError {
  readonly code = TimerErrorCodes.notFound;
  constructor(readonly timerId: string) {
    super(`timer ${timerId} not found`);
  }
}

/** The timer fired or was cancelled; only an identical repeat of its setting is accepted. */
export class TimerNotPendingError extends DomainError {
  readonly code = TimerErrorCodes.notPending;
  constructor(readonly timerId: string, readonly state: string) {
    super(`timer ${timerId} is ${state}; it can no longer be rescheduled`);
  }
}

/** The id is taken by a timer of another purpose or workspace. */
export class TimerConflictError extends DomainError {
  readonly code = TimerErrorCodes.conflict;
  constructor(readonly timerId: string) {
    super(`timer id ${timerId} is already used for something else`);
  }
}
