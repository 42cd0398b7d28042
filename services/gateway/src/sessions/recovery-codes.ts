import { randomBytes } from 'node:crypto';
import { sha256 } from '../identity/secrets';

const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
export const RECOVERY_CODE_COUNT = 10;

/** 16 characters from a 32-letter alphabet (80 bits), grouped by four for reading aloud. */
export function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const characters = [...bytes].map((byte) => ALPHABET[byte % ALPHABET.length]!);
  return [0, 4, 8, 12].map((start) => characters.slice(start, start + 4).join('')).join('-');
}

/** Case, spaces and dashes do not matter when a person types a code back. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** 80 random bits need no slow hash: SHA-256 of the normalised code. */
export function recoveryCodeHash(code: string): Buffer {
  return sha256(normalizeRecoveryCode(code));
}
