import { DomainError } from '@packetagent/contracts';

export class DeliveryNotFoundError extends DomainError {
  readonly code = 'delivery_not_found';
  constructor(deliveryId: string) {
    super(`no delivery ${deliveryId} in this workspace`);
  }
}

export class DeliveryNotDeadError extends DomainError {
  readonly code = 'delivery_not_dead';
  constructor(deliveryId: string, state: string) {
    super(`delivery ${deliveryId} is ${state}: only a dead-lettered delivery can be redriven`);
  }
}

export class CallbackInvalidError extends DomainError {
  readonly code = 'callback_invalid';
  constructor() {
    super('this link is not valid');
  }
}

export class CallbackUsedError extends DomainError {
  readonly code = 'callback_used';
  constructor(usedAt: Date, outcome: string | null) {
    super(`this link was already used at ${usedAt.toISOString()}${outcome && outcome !== 'executed' ? ` (it was refused: ${outcome})` : ''}; nothing was done`);
  }
}

export class CallbackExpiredError extends DomainError {
  readonly code = 'callback_expired';
  constructor(expiresAt: Date) {
    super(`this link expired at ${expiresAt.toISOString()}; nothing was done`);
  }
}

/** The link was good but its command refused (the attention was answered, the run ended...); the link is spent. */
export class CallbackRefusedError extends DomainError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
