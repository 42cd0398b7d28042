import {
  DomainError,
  Identifiers,
  parsePayload,
  PayloadDigestSchema,
  payloadContent,
  payloadMatches,
  payloadRef,
  ValidationError,
  type JsonValue,
  type PayloadContent,
  type PayloadRef,
  type PayloadRefBody,
} from '@packetagent/contracts';

/** No payload with this digest in the workspace; another workspace's payload answers the same. */
export class PayloadNotFoundError extends DomainError {
  readonly code = 'payload_not_found';
  constructor(readonly digest: string) {
    super(`no payload ${digest} in this workspace`);
  }
}

/** Stored content that does not hash to the digest it is stored under: it was altered after it was written. */
export class PayloadDigestMismatchError extends DomainError {
  readonly code = 'payload_digest_mismatch';
  constructor(
    readonly digest: string,
    readonly actualDigest: string,
    readonly actualSize: number,
  ) {
    super(`stored payload ${digest} does not match its digest: its ${actualSize} bytes digest to ${actualDigest}`);
  }
}

/** A reference whose size is not the size of the (intact) content its digest names: the event is wrong, not the payload. */
export class PayloadSizeMismatchError extends DomainError {
  readonly code = 'payload_size_mismatch';
  constructor(
    readonly digest: string,
    readonly statedSize: number,
    readonly actualSize: number,
  ) {
    super(`the reference to payload ${digest} says ${statedSize} bytes, the payload has ${actualSize}`);
  }
}

export class StoredPayloadTooLargeError extends DomainError {
  readonly code = 'stored_payload_too_large';
  constructor(
    readonly size: number,
    readonly limitBytes: number,
  ) {
    super(`the payload is ${size} bytes, above the limit of ${limitBytes} bytes`);
  }
}

/** What a read found under one digest. */
export type PayloadRead =
  | { status: 'ok'; bytes: Buffer }
  | { status: 'missing' }
  | { status: 'mismatch'; actualDigest: string; size: number };

/** What a check found under one digest, without the content. */
export type PayloadState = { status: 'ok'; size: number } | { status: 'missing' } | { status: 'mismatch'; actualDigest: string; size: number };

export const DEFAULT_MAX_PAYLOAD_BYTES = 32 * 1024 * 1024;

/**
 * Content-addressed storage of large event fields, per workspace. Implementations provide the
 * three primitives (Postgres today; an S3-compatible bucket can replace it); reading always
 * verifies the content against its digest.
 */
export abstract class PayloadStore {
  /** Stores the content under (workspace, digest); storing it again changes nothing. */
  protected abstract write(workspaceId: string, content: PayloadContent): Promise<void>;

  /** Reads and verifies every digest asked for; each one is in the answer. */
  abstract read(workspaceId: string, digests: readonly string[]): Promise<Map<string, PayloadRead>>;

  /** Verifies every digest asked for without handing the content over. */
  abstract check(workspaceId: string, digests: readonly string[]): Promise<Map<string, PayloadState>>;

  constructor(readonly maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES) {}

  /** Stores content built by `payloadContent` and answers its reference. */
  async put(workspaceId: string, content: PayloadContent): Promise<PayloadRef> {
    if (!payloadMatches(content.bytes, content)) throw new ValidationError('the payload content does not match its digest and size');
    return this.store(workspaceId, content);
  }

  /** Stores the canonical JSON of `value`; the reference is what the event carries in its place. */
  async putJson(workspaceId: string, value: JsonValue): Promise<PayloadRef> {
    return this.store(workspaceId, payloadContent(value));
  }

  private async store(workspaceId: string, content: PayloadContent): Promise<PayloadRef> {
    assertWorkspace(workspaceId);
    if (content.size > this.maxBytes) throw new StoredPayloadTooLargeError(content.size, this.maxBytes);
    await this.write(workspaceId, content);
    return payloadRef(content);
  }

  /** The verified content bytes. */
  async get(workspaceId: string, digest: string): Promise<Buffer> {
    assertWorkspace(workspaceId);
    assertDigests([digest]);
    return contentOf(digest, (await this.read(workspaceId, [digest])).get(digest));
  }

  /** The value a reference stands for, verified against its digest and size. */
  async getJson(workspaceId: string, ref: PayloadRef | PayloadRefBody): Promise<JsonValue> {
    const body = '$payload' in ref ? ref.$payload : ref;
    const bytes = await this.get(workspaceId, body.digest);
    if (bytes.length !== body.size) throw new PayloadSizeMismatchError(body.digest, body.size, bytes.length);
    return parsePayload(bytes);
  }
}

/** The bytes of a read, or the typed error for what it found instead. */
export function contentOf(digest: string, read: PayloadRead | undefined): Buffer {
  if (!read || read.status === 'missing') throw new PayloadNotFoundError(digest);
  if (read.status === 'mismatch') throw new PayloadDigestMismatchError(digest, read.actualDigest, read.size);
  return read.bytes;
}

export function assertWorkspace(workspaceId: string): void {
  if (!Identifiers.workspace.test(workspaceId)) throw new ValidationError('invalid workspace id', [{ path: 'workspaceId', message: 'expected [A-Za-z0-9_-]{1,64}' }]);
}

export function assertDigests(digests: readonly string[]): void {
  const bad = digests.findIndex((digest) => !PayloadDigestSchema.safeParse(digest).success);
  if (bad >= 0) throw new ValidationError('invalid payload digest', [{ path: `digests[${bad}]`, message: 'a SHA-256 digest: 64 lower-case hex digits' }]);
}
