import { DomainError } from '@packetagent/contracts';

/** No credentials, or credentials that do not identify anyone. */
export class UnauthenticatedError extends DomainError {
  readonly code: string = 'unauthenticated';
}

/** E-mail and password do not match; worded the same whether or not the address exists. */
export class InvalidCredentialsError extends DomainError {
  readonly code = 'invalid_credentials';
  constructor() {
    super('the e-mail address or password is not correct');
  }
}

export class InvalidTotpCodeError extends DomainError {
  readonly code = 'invalid_totp_code';
  constructor() {
    super('the code is not valid');
  }
}

export class ApiKeyInvalidError extends DomainError {
  readonly code = 'api_key_invalid';
}

/** The caller is known but may not do this. */
export class PermissionDeniedError extends DomainError {
  readonly code = 'permission_denied';
}

export class CsrfTokenInvalidError extends DomainError {
  readonly code = 'csrf_token_invalid';
  constructor() {
    super('a session-authenticated change needs the x-csrf-token header returned at login');
  }
}

/** A route carries no access marker; refused rather than served unprotected. */
export class AccessPolicyMissingError extends DomainError {
  readonly code = 'access_policy_missing';
  constructor() {
    super('this route has no access policy');
  }
}

export class RoleCeilingExceededError extends DomainError {
  readonly code = 'role_ceiling_exceeded';
}

export class NotFoundError extends DomainError {
  readonly code = 'not_found';
}

export class ConflictError extends DomainError {
  readonly code = 'conflict';
}

export class SetupCompletedError extends DomainError {
  readonly code = 'setup_completed';
  constructor() {
    super('setup has already been completed');
  }
}

export class InvalidSetupTokenError extends DomainError {
  readonly code = 'invalid_setup_token';
  constructor() {
    super('the setup token is not valid');
  }
}

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited';
  constructor(readonly retryAfterSeconds: number) {
    super(`too many attempts; retry after ${retryAfterSeconds} s`);
  }
}

/** A dependency the gateway needs (Redis) did not answer. */
export class ServiceUnavailableError extends DomainError {
  readonly code = 'unavailable';
  override readonly retryable = true;
}

/** The password was right but the login still owes its second factor. */
export class TotpRequiredError extends UnauthenticatedError {
  override readonly code = 'totp_required';
  constructor() {
    super('the login is waiting for its second factor (POST /api/v1/auth/totp)');
  }
}

/** The operation changes how the account signs in; the session must have proved who it is lately. */
export class ReauthenticationRequiredError extends DomainError {
  readonly code = 'reauthentication_required';
  constructor() {
    super('confirm it is you first: POST /api/v1/auth/reauthenticate, or sign in again with a passkey');
  }
}

/** A passkey sign-in that failed for any reason; the reason is not told, as for a wrong password. */
export class PasskeyNotAcceptedError extends DomainError {
  readonly code = 'invalid_credentials';
  constructor() {
    super('the passkey was not accepted; try again, or sign in with your password');
  }
}
