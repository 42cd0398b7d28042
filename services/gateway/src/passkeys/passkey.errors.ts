import { DomainError } from '@packetagent/contracts';

/** No such passkey among the caller's own; another user's answers the same. */
export class PasskeyNotFoundError extends DomainError {
  readonly code = 'passkey_not_found';
  constructor() {
    super('no such passkey on your account');
  }
}

/** The authenticator's credential is already registered (to this account or another). */
export class PasskeyAlreadyExistsError extends DomainError {
  readonly code = 'passkey_already_exists';
  constructor() {
    super('this authenticator is already registered');
  }
}
