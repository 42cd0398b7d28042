import { ValidationError } from '../errors';

/** A worker definition that does not satisfy the format; `issues` name each offending path. */
export class DefinitionError extends ValidationError {
  override readonly code = 'invalid_definition';
}

/** A definition source larger than MAX_DEFINITION_BYTES; refused before it is parsed. */
export class DefinitionTooLargeError extends ValidationError {
  override readonly code = 'definition_too_large';
}

/** Deployment overrides that are malformed or name something the version does not have. */
export class InvalidOverridesError extends ValidationError {
  override readonly code = 'invalid_overrides';
}

/** Deployment overrides that would grant more than the pinned version does. */
export class BroadeningOverrideError extends ValidationError {
  override readonly code = 'broadening_override';
}
