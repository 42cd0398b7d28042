import { randomBytes } from 'node:crypto';
import { randomToken, sha256 } from '../identity/secrets';

/**
 * An API key is `pa_<id>_<secret>`: the id (lower-case hex, no underscore) finds the row, the
 * secret (32 random bytes, base64url) is checked against its SHA-256 in constant time.
 */
const API_KEY = /^pa_([a-f0-9]{20})_([A-Za-z0-9_-]{43})$/;

export interface IssuedApiKey {
  id: string;
  /** The whole key, shown to its creator once. */
  token: string;
  secretHash: Buffer;
  /** Enough for a person to recognise the key in a listing; useless without the secret. */
  displayPrefix: string;
}

export function issueApiKey(): IssuedApiKey {
  const id = randomBytes(10).toString('hex');
  const secret = randomToken(32);
  return { id, token: `pa_${id}_${secret}`, secretHash: sha256(secret), displayPrefix: `pa_${id}_` };
}

export function parseApiKey(token: string): { id: string; secret: string } | null {
  const match = API_KEY.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('pa_');
}
