import { z } from 'zod';
import { ValidationError } from '../errors';
import { canonicalJson, isJsonObject, jsonIssues, sha256Hex, type JsonValue } from '../json';

/**
 * Payloads by reference: a large JSON value (a model transcript, tool arguments, a tool result)
 * is stored content-addressed, and the event carries `{"$payload": {digest, size, mediaType}}`
 * in its place. The content is the RFC 8785 canonical JSON of the value, UTF-8; the digest is
 * SHA-256 (hex) of those bytes. See docs/adr/0019-payloads-by-reference.md.
 */
export const PAYLOAD_MARKER = '$payload';
export const PAYLOAD_MEDIA_TYPE = 'application/json';

export const PayloadDigestSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 digest: 64 lower-case hex digits');

export const PayloadRefBodySchema = z.strictObject({
  digest: PayloadDigestSchema,
  /** Length of the content in bytes. */
  size: z.number().int().nonnegative(),
  mediaType: z.literal(PAYLOAD_MEDIA_TYPE),
});
export type PayloadRefBody = z.infer<typeof PayloadRefBodySchema>;

/** The JSON value standing in an event's data where the original value was too large to carry. */
export const PayloadRefSchema = z
  .strictObject({ [PAYLOAD_MARKER]: PayloadRefBodySchema })
  .describe('A JSON value stored by reference; GET /api/v1/workspaces/{ws}/payloads/{digest} answers its content.');
export type PayloadRef = z.infer<typeof PayloadRefSchema>;

/** A reference exactly as the contract has it; any other object, even one with a `$payload` key, is plain data. */
export function isPayloadRef(value: unknown): value is PayloadRef {
  return isJsonObject(value as JsonValue) && PAYLOAD_MARKER in (value as object) && PayloadRefSchema.safeParse(value).success;
}

export function payloadRef(content: { digest: string; size: number }): PayloadRef {
  return { [PAYLOAD_MARKER]: { digest: content.digest, size: content.size, mediaType: PAYLOAD_MEDIA_TYPE } };
}

export interface PayloadContent {
  /** The canonical JSON of the value, UTF-8. */
  bytes: Buffer;
  /** SHA-256 (hex) of `bytes`. */
  digest: string;
  /** `bytes.length`. */
  size: number;
}

/**
 * The stored form of a value: its canonical JSON bytes, their digest and length. The value
 * stood in an event's data, so it obeys the same rules (plain JSON that survives jsonb).
 */
export function payloadContent(value: JsonValue): PayloadContent {
  const issues = jsonIssues(value);
  if (issues.length) throw new ValidationError('the payload is not plain JSON', issues.slice(0, 20));
  const bytes = Buffer.from(canonicalJson(value), 'utf8');
  return { bytes, digest: sha256Hex(bytes), size: bytes.length };
}

/** Whether `bytes` are the content a reference names: the same length and the same SHA-256. */
export function payloadMatches(bytes: Uint8Array, ref: { digest: string; size: number }): boolean {
  return bytes.length === ref.size && sha256Hex(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)) === ref.digest;
}

/** The value whose canonical JSON `bytes` are. */
export function parsePayload(bytes: Uint8Array): JsonValue {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')) as JsonValue;
}

/** Where a reference stands in a value: `toolCalls[0].arguments`, or '' for the value itself. */
export interface PayloadRefAt {
  path: string;
  ref: PayloadRefBody;
}

const childPath = (path: string, key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

/** Every reference in `data`, in document order (object keys as given). Content is never searched. */
export function collectPayloadRefs(data: unknown): PayloadRefAt[] {
  const found: PayloadRefAt[] = [];
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, childPath(path, index)));
    } else if (typeof value === 'object' && value !== null) {
      if (isPayloadRef(value)) {
        found.push({ path, ref: value[PAYLOAD_MARKER] });
        return;
      }
      for (const [key, item] of Object.entries(value)) walk(item, childPath(path, key));
    }
  };
  walk(data, '');
  return found;
}

/** The content of a reference, or undefined to leave the reference where it is. */
export type PayloadLookup = (ref: PayloadRefBody, path: string) => JsonValue | undefined;

/**
 * A copy of `data` with each reference replaced by what `lookup` answers for it. A resolved
 * value is not searched again: a reference inside stored content is content, not a reference.
 */
export function resolvePayloadRefs(data: JsonValue, lookup: PayloadLookup): JsonValue {
  const walk = (value: JsonValue, path: string): JsonValue => {
    if (Array.isArray(value)) return value.map((item, index) => walk(item, childPath(path, index)));
    if (typeof value === 'object' && value !== null) {
      if (isPayloadRef(value)) return lookup(value[PAYLOAD_MARKER], path) ?? value;
      // fromEntries defines own properties, so a `__proto__` key stays a key.
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, childPath(path, key))]));
    }
    return value;
  };
  return walk(data, '');
}

/** Why a reference does not hold, as audit verification and the evidence bundle verifier report it. */
export const PAYLOAD_BREAK_REASONS = ['payload_missing', 'payload_mismatch'] as const;
export type PayloadBreakReason = (typeof PAYLOAD_BREAK_REASONS)[number];
