import { randomBytes } from 'node:crypto';
import { randomToken, sha256 } from '../../identity/secrets';

/**
 * A PacketADE actor token is `pade_<id>_<secret>`, built like an API key (the id finds the row,
 * the 256-bit secret is checked against its SHA-256) but with its own prefix, so neither kind
 * of credential is ever mistaken for the other.
 */
const ACTOR_TOKEN = /^pade_([a-f0-9]{20})_([A-Za-z0-9_-]{43})$/;
export const ACTOR_TOKEN_PREFIX = 'pade_';

export interface IssuedActorToken {
  id: string;
  /** The whole token, shown to its creator once. */
  token: string;
  secretHash: Buffer;
  displayPrefix: string;
}

export function issueActorToken(): IssuedActorToken {
  const id = randomBytes(10).toString('hex');
  const secret = randomToken(32);
  return { id, token: `${ACTOR_TOKEN_PREFIX}${id}_${secret}`, secretHash: sha256(secret), displayPrefix: `${ACTOR_TOKEN_PREFIX}${id}_` };
}

export function parseActorToken(token: string): { id: string; secret: string } | null {
  const match = ACTOR_TOKEN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

export function looksLikeActorToken(token: string): boolean {
  return token.startsWith(ACTOR_TOKEN_PREFIX);
}
