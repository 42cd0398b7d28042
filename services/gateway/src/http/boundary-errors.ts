import { DomainError, ValidationError, type ValidationIssue } from '@packetagent/contracts';
import { MAX_NESTING_DEPTH } from './untrusted-input';

/** A parameter, query value or body string holding a NUL or an unpaired surrogate; each issue names where. */
export class InvalidCharactersError extends ValidationError {
  override readonly code = 'invalid_characters';
  readonly summary = 'the request holds characters that are not text (NUL or an unpaired surrogate)';

  constructor(issues: readonly ValidationIssue[]) {
    super('invalid characters', issues);
  }
}

/** A cursor that is not base64url of printable text, so none this API issued. */
export class InvalidCursorParameterError extends ValidationError {
  override readonly code = 'invalid_cursor';
  readonly summary = 'the cursor is not one this API issued';

  constructor() {
    super('invalid cursor', [{ path: 'cursor', message: 'not a cursor this API issued' }]);
  }
}

export class NestingTooDeepError extends DomainError {
  readonly code = 'nesting_too_deep';

  constructor() {
    super(`the request body nests deeper than ${MAX_NESTING_DEPTH} levels`);
  }
}

export class UnsupportedCharsetError extends DomainError {
  readonly code = 'unsupported_charset';

  constructor() {
    super('request bodies must be UTF-8: send charset=utf-8 or no charset');
  }
}
