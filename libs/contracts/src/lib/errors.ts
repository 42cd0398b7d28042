/**
 * Base of every error the domain raises on purpose. `code` is a stable string literal that
 * callers branch on; exactly two places translate codes: the HTTP exception filter
 * (problem+json) and the consumer runner (ack / nak / term).
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  /** Whether repeating the same operation later may succeed. */
  readonly retryable: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  toJSON(): { code: string; message: string; retryable: boolean } {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}

export interface ValidationIssue {
  path: string;
  message: string;
}

/** Input that does not satisfy a rule; carries every issue with the path it applies to. */
export class ValidationError extends DomainError {
  readonly code: string = 'validation_failed';

  constructor(
    message: string,
    readonly issues: readonly ValidationIssue[] = [],
  ) {
    super(issues.length ? `${message}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}` : message);
  }
}

/** Something that may succeed when retried (a dependency was briefly unavailable). */
export class TransientError extends DomainError {
  readonly code: string = 'transient_failure';
  override readonly retryable = true;
}
