import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** `bytes` random bytes, base64url (no padding). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time comparison of two digests (of any inputs: hashing first equalises lengths). */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export function sameSecret(a: string, b: string): boolean {
  return sameDigest(sha256(a), sha256(b));
}
