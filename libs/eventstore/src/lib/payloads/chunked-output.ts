import { createHash } from 'node:crypto';
import { DomainError, type PayloadRef } from '@packetagent/contracts';
import type { PayloadStore } from './payload-store';

/** Bytes kept as a list of payload chunks `{base64}`, with the size and SHA-256 of the whole. */
export interface ChunkedBytes {
  bytes: number;
  digest: string;
  chunks: readonly PayloadRef[];
}

/** Stored bytes that do not add up to the size and digest their record states. */
export class ChunkedBytesMismatchError extends DomainError {
  readonly code = 'output_digest_mismatch';
}

/** The bytes, each chunk verified by the payload store and the whole against its digest. */
export async function readChunkedBytes(payloads: PayloadStore, workspaceId: string, output: ChunkedBytes): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const ref of output.chunks) {
    const value = (await payloads.getJson(workspaceId, ref)) as { base64?: unknown } | null;
    if (typeof value?.base64 !== 'string') throw new ChunkedBytesMismatchError('a stored chunk is not {base64}');
    parts.push(Buffer.from(value.base64, 'base64'));
  }
  const bytes = Buffer.concat(parts);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length !== output.bytes || digest !== output.digest) {
    throw new ChunkedBytesMismatchError(`the stored bytes do not match their record: ${bytes.length} bytes hashing to ${digest}, expected ${output.bytes} bytes hashing to ${output.digest}`);
  }
  return bytes;
}
