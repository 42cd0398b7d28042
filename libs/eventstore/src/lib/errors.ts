import { DomainError, ValidationError } from '@packetagent/contracts';

/** The stream was not at the version the writer expected; nothing was written. */
export class ConcurrencyError extends DomainError {
  readonly code = 'concurrency_conflict';
  /** Re-reading the stream and deciding again may succeed. */
  override readonly retryable = true;
  constructor(
    readonly stream: string,
    readonly expected: number | 'no_stream' | 'any',
    readonly actual: number,
  ) {
    super(`stream "${stream}" is at version ${actual}, expected ${expected}`);
  }
}

/** An append that breaks a rule of the store (bad ids, non-JSON data, wrong workspace). */
export class InvalidEventError extends ValidationError {
  override readonly code = 'invalid_event';
}

export class EventTooLargeError extends DomainError {
  readonly code = 'event_too_large';
  constructor(
    readonly index: number,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(`event ${index} is ${bytes} bytes, above the limit of ${limitBytes} bytes`);
  }
}
