import { BudgetErrorCodes, DomainError, type BudgetScope, type ReservationState } from '@packetagent/contracts';

/** The run's admission has not been projected yet (events travel asynchronously); a retry will find it. */
export class BudgetRunNotFoundError extends DomainError {
  readonly code = BudgetErrorCodes.runNotFound;
  override readonly retryable = true;
  constructor(readonly runId: string) {
    super(`run ${runId} is not known to the budget service yet`);
  }
}

export class BudgetLimitsNotFoundError extends DomainError {
  readonly code = BudgetErrorCodes.limitsNotFound;
  override readonly retryable = true;
  constructor(readonly deploymentId: string) {
    super(`the limits of deployment ${deploymentId} are not known to the budget service yet`);
  }
}

export class ReservationNotFoundError extends DomainError {
  readonly code = BudgetErrorCodes.reservationNotFound;
  constructor(readonly reservationId: string) {
    super(`reservation ${reservationId} not found`);
  }
}

/** The hold already moved (settled, released or expired); moving it again would count it twice. */
export class ReservationStateError extends DomainError {
  readonly code = BudgetErrorCodes.reservationState;
  constructor(readonly reservationId: string, readonly state: ReservationState, readonly attempted: 'settle' | 'release') {
    super(`reservation ${reservationId} is ${state}; it can not be ${attempted === 'settle' ? 'settled' : 'released'}`);
  }
}

export class BudgetIdempotencyConflictError extends DomainError {
  readonly code = BudgetErrorCodes.idempotencyConflict;
  constructor(readonly reservationId: string) {
    super(`the idempotency key already names reservation ${reservationId}, made for another run or other amounts`);
  }
}

export class BudgetScopeNotFoundError extends DomainError {
  readonly code = BudgetErrorCodes.scopeNotFound;
  constructor(readonly scope: BudgetScope) {
    super(`no ${scope.kind} budget ${scope.id} in ${scope.unit} per ${scope.window}`);
  }
}

/** The attention already raised a run's limit, for another run or by another amount. */
export class BudgetRaiseConflictError extends DomainError {
  readonly code = BudgetErrorCodes.raiseConflict;
  constructor(readonly attentionId: string) {
    super(`attention ${attentionId} already raised a run's limit for another run or amount`);
  }
}
