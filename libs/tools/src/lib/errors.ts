import { DomainError, ValidationError, type JsonValue, type ValidationIssue } from '@packetagent/contracts';

/**
 * The model named an unknown tool or sent arguments its schema refuses. The message lists every
 * issue with its path and goes back to the model as a correction.
 */
export class ToolArgumentsError extends ValidationError {
  override readonly code = 'tool_arguments_invalid';

  constructor(
    readonly tool: string,
    issues: readonly ValidationIssue[],
  ) {
    super(`invalid arguments for ${tool}`, issues);
  }
}

/** execute was called without an allow decision for exactly this call, or for a control tool. */
export class ToolNotAuthorizedError extends DomainError {
  readonly code = 'tool_not_authorized';
}

/**
 * The call was interrupted by its context's signal: whether it took effect is unknown, so the
 * caller decides (retry by key, or stop as uncertain).
 */
export class ToolAbortedError extends DomainError {
  readonly code = 'tool_aborted';
}

/**
 * A handler's expected failure; the registry turns it into an `{ok: false, error}` outcome.
 * Messages are shown to the model and logged, so they never carry a secret.
 */
export class ToolFailure extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    readonly output: JsonValue = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
