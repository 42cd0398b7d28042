import { ValidationError } from '../errors';

// Every refusal of a package or of its envelope is a ValidationError whose issues name the path
// they apply to; the code tells a client which rule was broken without reading the message.

/** A package (or an envelope) that does not satisfy the format. */
export class PackageInvalidError extends ValidationError {
  override readonly code = 'package_invalid';
}

/** A document larger than MAX_PACKAGE_BYTES; refused before it is parsed. */
export class PackageTooLargeError extends ValidationError {
  override readonly code = 'package_too_large';
}

/** A package of another `packetagent/vN` than the one this server reads. */
export class PackageUnsupportedVersionError extends ValidationError {
  override readonly code = 'package_unsupported_version';
}

/** An envelope whose payloadType is not the worker package's. */
export class EnvelopePayloadTypeError extends ValidationError {
  override readonly code = 'package_payload_type';
}

/**
 * A signed payload that is not the RFC 8785 form of the JSON it holds: the bytes signed must be
 * the bytes the package digest is computed over, so a re-indented or re-ordered payload is refused.
 */
export class PackageNotCanonicalError extends ValidationError {
  override readonly code = 'package_not_canonical';
}

/** A key that is not an Ed25519 key (or not a key at all). */
export class SignatureKeyUnsupportedError extends ValidationError {
  override readonly code = 'signature_key_unsupported';
}

/** A signature whose keyid is neither trusted nor accompanied by a public key. */
export class SignatureKeyUnknownError extends ValidationError {
  override readonly code = 'signature_key_unknown';
}

/** A signature whose keyid is not the fingerprint of the key it is verified with. */
export class SignatureKeyIdMismatchError extends ValidationError {
  override readonly code = 'signature_keyid_mismatch';
}

/** A signature that does not verify over the envelope's payload. */
export class SignatureInvalidError extends ValidationError {
  override readonly code = 'signature_invalid';
}
