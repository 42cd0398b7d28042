import { hash, verify } from '@node-rs/argon2';
import { randomToken } from './secrets';

/** argon2id (the library's default algorithm) with its default memory and time costs. */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | null = null;

/**
 * A hash of nothing anyone knows, verified against when the e-mail address is unknown, so that
 * an unknown address costs the same time as a wrong password.
 */
export function unknownUserHash(): Promise<string> {
  dummyHash ??= hashPassword(randomToken(24));
  return dummyHash;
}
