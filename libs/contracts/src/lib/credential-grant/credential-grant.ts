import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { DomainError } from '../errors';
import { canonicalJson } from '../json';

/**
 * Permission for one run to read one credential for one tool, once, briefly. Policy issues it
 * (signed with Ed25519) after authorising the call; the vault verifies the signature and the
 * expiry, and records the grant id so a second use is refused.
 */
export const CredentialGrantSchema = z.strictObject({
  grantId: z.string().min(1).max(100),
  workspaceId: z.string().min(1).max(64),
  runId: z.string().min(1).max(200),
  tool: z.string().min(1).max(100),
  credential: z.string().regex(/^[a-z][a-z0-9_]{0,62}$/),
  expiresAt: z.iso.datetime(),
});
export type CredentialGrant = z.infer<typeof CredentialGrantSchema>;

export class CredentialGrantInvalidError extends DomainError {
  readonly code = 'credential_grant_invalid';
}

export class CredentialGrantExpiredError extends DomainError {
  readonly code = 'credential_grant_expired';
}

/** `<base64url canonical grant>.<base64url Ed25519 signature over it>` */
export function signCredentialGrant(grant: CredentialGrant, privateKey: KeyObject): string {
  const body = Buffer.from(canonicalJson(CredentialGrantSchema.parse(grant))).toString('base64url');
  return `${body}.${sign(null, Buffer.from(body), privateKey).toString('base64url')}`;
}

/** The grant, if the signature is policy's and it has not expired; never says more than why it refused. */
export function verifyCredentialGrant(token: string, publicKey: KeyObject, now: Date = new Date()): CredentialGrant {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined || token.length > 4_096) throw new CredentialGrantInvalidError('malformed credential grant');
  if (!verify(null, Buffer.from(body), publicKey, Buffer.from(signature, 'base64url'))) {
    throw new CredentialGrantInvalidError('credential grant signature does not verify');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw new CredentialGrantInvalidError('malformed credential grant');
  }
  const grant = CredentialGrantSchema.safeParse(parsed);
  if (!grant.success) throw new CredentialGrantInvalidError('malformed credential grant');
  if (Date.parse(grant.data.expiresAt) <= now.getTime()) throw new CredentialGrantExpiredError('credential grant has expired');
  return grant.data;
}

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The grant-signing key pair from a 32-byte seed (base64 or base64url, e.g.
 * PACKETAGENT_GRANT_SIGNING_KEY); without one, a fresh pair for this process.
 */
export function grantSigningKeys(seed?: string): { privateKey: KeyObject; publicKey: KeyObject } {
  if (!seed) return generateKeyPairSync('ed25519');
  const raw = Buffer.from(seed, 'base64url');
  if (raw.length !== 32) throw new Error('the grant signing key must be 32 bytes, base64-encoded');
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}
