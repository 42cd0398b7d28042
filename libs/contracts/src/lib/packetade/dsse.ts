import { KeyObject, createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { z } from 'zod';
import type { ValidationIssue } from '../errors';
import { canonicalJson, type JsonValue } from '../json';
import { definitionErrorMap, toValidationIssues } from '../worker-definition/issues';
import { strict } from '../worker-definition/schema-kit';
import {
  EnvelopePayloadTypeError,
  PackageInvalidError,
  PackageNotCanonicalError,
  SignatureInvalidError,
  SignatureKeyIdMismatchError,
  SignatureKeyUnknownError,
  SignatureKeyUnsupportedError,
} from './errors';
import { decodeJsonDocument, parseJsonDocument } from './json-document';
import { WORKER_PACKAGE_PAYLOAD_TYPE, parseWorkerPackage, type WorkerPackage } from './worker-package.v1';

// DSSE v1 envelopes (github.com/secure-systems-lab/dsse: envelope.md, protocol.md) signed with
// Ed25519 keys, each key named by the SHA-256 fingerprint of its SPKI DER encoding.

/** Most signatures one envelope may carry. */
export const MAX_ENVELOPE_SIGNATURES = 8;

const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard base64 with padding, and in its one canonical spelling (the unused bits of the last
 * character zero), so that a text decodes to exactly one byte string and back.
 */
function base64Issue(text: string, ctx: z.core.$RefinementCtx): void {
  if (!STANDARD_BASE64.test(text)) ctx.addIssue({ code: 'custom', message: 'must be standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=")' });
  else if (Buffer.from(text, 'base64').toString('base64') !== text) ctx.addIssue({ code: 'custom', message: 'must be canonical base64: the unused bits of the last character must be zero' });
}
const Base64 = z.string().superRefine(base64Issue);
const NonEmptyBase64 = z.string().min(1).superRefine(base64Issue);

export const FINGERPRINT_PATTERN = /^SHA256:[0-9a-f]{64}$/;

const DsseSignatureSchema = strict({
  keyid: z.string().min(1).max(200),
  sig: NonEmptyBase64,
  publicKey: NonEmptyBase64.meta({ description: 'The signing key: base64 of its SPKI DER encoding (Ed25519).' }).optional(),
});

export const DsseEnvelopeSchema = strict({
  payloadType: z.string().min(1).max(200),
  payload: Base64,
  signatures: z
    .array(DsseSignatureSchema)
    .min(1)
    .max(MAX_ENVELOPE_SIGNATURES)
    .superRefine((signatures, ctx) => {
      const seen = new Map<string, number>();
      signatures.forEach((signature, index) => {
        const first = seen.get(signature.keyid);
        if (first === undefined) seen.set(signature.keyid, index);
        else ctx.addIssue({ code: 'custom', path: [index, 'keyid'], message: `duplicate of signatures[${first}].keyid: one signature per key` });
      });
    }),
});

export type DsseSignature = z.output<typeof DsseSignatureSchema>;
export type DsseEnvelope = z.output<typeof DsseEnvelopeSchema>;

export interface TrustedKey {
  /** `SHA256:<hex>` of the key's SPKI DER. */
  fingerprint: string;
  /** A public key object or its PEM text. */
  publicKey: KeyObject | string;
}

export interface OpenedEnvelope {
  /** The payload, parsed. */
  payload: unknown;
  /** The payload bytes that were signed. */
  payloadBytes: Buffer;
  /** One entry per signature, in order: every one verified; `trusted` when its key is one of the trusted keys. */
  signatures: Array<{ keyId: string; trusted: boolean }>;
}

/** Validates an envelope that is a parsed JSON value; PackageInvalidError names each issue's path. */
export function parseDsseEnvelope(value: unknown): DsseEnvelope {
  const result = DsseEnvelopeSchema.safeParse(value, { error: definitionErrorMap });
  if (!result.success) throw new PackageInvalidError('invalid DSSE envelope', toValidationIssues(result.error.issues));
  return result.data;
}

/** DSSE v1 pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN in bytes, ASCII decimal. */
export function preAuthEncoding(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

/** `SHA256:` and the lower-case hex SHA-256 of the key's SPKI DER; a private key gives its public key's. */
export function publicKeyFingerprint(key: KeyObject | string | Buffer): string {
  return `SHA256:${createHash('sha256').update(spkiDer(toPublicKey(key))).digest('hex')}`;
}

/**
 * Signs `payload` as a DSSE envelope of `payloadType` with one Ed25519 key; the signature names
 * the key by fingerprint and carries it (SPKI DER), so an untrusted key can still be checked.
 * Lower level than signWorkerPackage: it signs any bytes.
 */
export function signDssePayload(payloadType: string, payload: Buffer, privateKey: KeyObject | string): DsseEnvelope {
  const key = typeof privateKey === 'string' ? readPrivateKey(privateKey) : privateKey;
  if (key.type !== 'private') throw new SignatureKeyUnsupportedError('cannot sign', [{ path: '', message: 'signing needs a private key' }]);
  requireEd25519(key, '');
  const publicKey = createPublicKey(key);
  return {
    payloadType,
    payload: payload.toString('base64'),
    signatures: [
      {
        keyid: publicKeyFingerprint(publicKey),
        sig: sign(null, preAuthEncoding(payloadType, payload), key).toString('base64'),
        publicKey: spkiDer(publicKey).toString('base64'),
      },
    ],
  };
}

/** Validates `pkg` (parseWorkerPackage) and signs its RFC 8785 form as a worker package envelope. */
export function signWorkerPackage(pkg: WorkerPackage, privateKey: KeyObject | string): DsseEnvelope {
  const { canonical } = parseWorkerPackage(pkg);
  return signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from(canonical, 'utf8'), privateKey);
}

/**
 * Verifies a worker package envelope and returns its payload. Refuses another payloadType, and
 * any signature that does not verify: a signature whose keyid is trusted is checked with the
 * trusted key (an embedded key is ignored); any other with its embedded key, and reported
 * `trusted: false` when valid: whether to accept an untrusted signer is the caller's decision.
 * The payload must then be the RFC 8785 form of the JSON it holds. Each refusal is a
 * ValidationError with its own code (see errors.ts).
 */
export function openEnvelope(envelope: DsseEnvelope, trusted: ReadonlyArray<TrustedKey>): OpenedEnvelope {
  const checked = parseDsseEnvelope(envelope);
  if (checked.payloadType !== WORKER_PACKAGE_PAYLOAD_TYPE) {
    throw new EnvelopePayloadTypeError('unexpected payload type', [
      { path: 'payloadType', message: `must be ${JSON.stringify(WORKER_PACKAGE_PAYLOAD_TYPE)}, got ${JSON.stringify(checked.payloadType)}` },
    ]);
  }
  const payloadBytes = Buffer.from(checked.payload, 'base64');
  const pae = preAuthEncoding(checked.payloadType, payloadBytes);
  const signatures = checked.signatures.map((signature, index) => verifySignature(signature, index, pae, trusted));
  const payload = readCanonicalPayload(payloadBytes);
  return { payload, payloadBytes, signatures };
}

function verifySignature(signature: DsseSignature, index: number, pae: Buffer, trusted: ReadonlyArray<TrustedKey>): { keyId: string; trusted: boolean } {
  const at = `signatures[${index}]`;
  const trustedKey = trusted.find((entry) => entry.fingerprint === signature.keyid);
  let key: KeyObject;
  let keyPath: string;
  if (trustedKey) {
    keyPath = `${at}.keyid`;
    key = readPublicKey(trustedKey.publicKey, keyPath, 'the trusted key');
  } else if (signature.publicKey !== undefined) {
    keyPath = `${at}.publicKey`;
    key = readPublicKey(Buffer.from(signature.publicKey, 'base64'), keyPath, 'publicKey');
  } else {
    throw new SignatureKeyUnknownError('unknown signing key', [
      { path: `${at}.keyid`, message: `${signature.keyid} is not a trusted key and the signature carries no publicKey` },
    ]);
  }
  requireEd25519(key, keyPath);
  const fingerprint = publicKeyFingerprint(key);
  if (fingerprint !== signature.keyid) {
    throw new SignatureKeyIdMismatchError('signature keyid does not name its key', [
      { path: `${at}.keyid`, message: `${JSON.stringify(signature.keyid)} is not the fingerprint of the key it is checked with (${fingerprint})` },
    ]);
  }
  if (!verifies(pae, key, Buffer.from(signature.sig, 'base64'))) {
    throw new SignatureInvalidError('invalid signature', [{ path: `${at}.sig`, message: `the signature by ${signature.keyid} does not verify over the payload` }]);
  }
  return { keyId: signature.keyid, trusted: trustedKey !== undefined };
}

function verifies(pae: Buffer, key: KeyObject, sig: Buffer): boolean {
  try {
    return verify(null, pae, key, sig);
  } catch {
    // A malformed signature (for instance of the wrong length) is an invalid one.
    return false;
  }
}

function readCanonicalPayload(bytes: Buffer): unknown {
  const notCanonical = (message: string): never => {
    throw new PackageNotCanonicalError('payload is not canonical JSON', [{ path: 'payload', message }]);
  };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return notCanonical('the payload is not valid UTF-8');
  }
  const value = parseJsonDocument(decodeJsonDocument(text, 'payload '), 'payload ');
  if (canonicalJson(value as JsonValue) !== text) {
    notCanonical('the payload bytes must be the RFC 8785 (JCS) form of its JSON: no whitespace, keys sorted, numbers and strings in their shortest form');
  }
  return value;
}

function toPublicKey(key: KeyObject | string | Buffer): KeyObject {
  if (Buffer.isBuffer(key)) return createPublicKey({ key, format: 'der', type: 'spki' });
  if (key instanceof KeyObject && key.type === 'public') return key;
  return createPublicKey(key);
}

function spkiDer(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' });
}

function readPublicKey(key: KeyObject | string | Buffer, path: string, what: string): KeyObject {
  try {
    const publicKey = toPublicKey(key);
    if (publicKey.type !== 'public') throw new Error('not a public key');
    return publicKey;
  } catch {
    throw new SignatureKeyUnsupportedError('unreadable signing key', [{ path, message: `${what} is not a public key (${Buffer.isBuffer(key) ? 'SPKI DER' : 'PEM'})` }]);
  }
}

function readPrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    throw new SignatureKeyUnsupportedError('unreadable signing key', [{ path: '', message: 'not a PEM private key' }]);
  }
}

function requireEd25519(key: KeyObject, path: string): void {
  if (key.asymmetricKeyType !== 'ed25519') {
    const issue: ValidationIssue = { path, message: `a ${key.asymmetricKeyType ?? 'symmetric'} key: only Ed25519 keys sign worker packages` };
    throw new SignatureKeyUnsupportedError('unsupported signing key', [issue]);
  }
}

/**
 * A publisher key as an admin hands it in to be trusted: PEM text or base64 SPKI DER of an
 * Ed25519 public key. Returns its fingerprint and SPKI DER; refuses anything else with
 * SignatureKeyUnsupportedError at `path`.
 */
export function readPublisherKey(text: string, path: string): { fingerprint: string; spki: Buffer } {
  const trimmed = text.trim();
  const source = trimmed.startsWith('-----BEGIN') ? trimmed : Buffer.from(trimmed, 'base64');
  const key = readPublicKey(source, path, 'publicKey');
  requireEd25519(key, path);
  return { fingerprint: publicKeyFingerprint(key), spki: spkiDer(key) };
}
