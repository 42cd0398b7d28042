import { DomainError, VaultErrorCodes } from '@packetagent/contracts';

// Messages name the credential and the reason only: never a value, a key or key material.

export class CredentialNotFoundError extends DomainError {
  readonly code = VaultErrorCodes.notFound;
  constructor(readonly credential: string) {
    super(`credential ${credential} not found`);
  }
}

export class CredentialGrantUsedError extends DomainError {
  readonly code = VaultErrorCodes.grantUsed;
  constructor(readonly grantId: string) {
    super(`credential grant ${grantId} was already used`);
  }
}

/** Authentication of the stored record failed: it was altered, moved to another record, or is under another master key. */
export class CredentialUndecryptableError extends DomainError {
  readonly code = VaultErrorCodes.undecryptable;
  constructor(readonly credential: string, readonly part: 'data key' | 'value') {
    super(`credential ${credential}: the stored ${part} does not authenticate`);
  }
}

export class MasterKeyUnavailableError extends DomainError {
  readonly code = VaultErrorCodes.masterKeyUnavailable;
  constructor(readonly credential: string, readonly keyId: string) {
    super(`credential ${credential} is wrapped under master key ${keyId}, which this vault was not given`);
  }
}

export class GrantVerificationUnavailableError extends DomainError {
  readonly code = VaultErrorCodes.grantVerificationUnavailable;
  constructor() {
    super('this vault has no grant verification key; it redeems no grant');
  }
}

/** The master key configuration cannot be used; the vault does not start. */
export class MasterKeyConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyConfigurationError';
  }
}
