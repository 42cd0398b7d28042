import {
  createCipheriv,
  createDecipheriv,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { z } from 'zod';
import { DomainError } from '../errors';

const base64 = z.string().regex(/^[A-Za-z0-9+/_-]+={0,2}$/).max(200_000);

/**
 * A credential value sealed to one recipient: X25519 between a fresh ephemeral key of the vault
 * and the recipient's key, HKDF-SHA256 to an AES-256-GCM key, the value encrypted under it.
 * Only the holder of the recipient's private key can open it, so it may cross the bus.
 */
export const SealedCredentialSchema = z.strictObject({
  /** The vault's ephemeral X25519 public key, raw 32 bytes, base64. */
  ephemeralPublicKey: base64,
  iv: base64,
  ciphertext: base64,
  tag: base64,
});
export type SealedCredential = z.infer<typeof SealedCredentialSchema>;

export class InvalidRecipientKeyError extends DomainError {
  readonly code = 'invalid_recipient_key';
}

/** The sealed value does not open with this key (another recipient's, or altered on the way). */
export class SealedCredentialInvalidError extends DomainError {
  readonly code = 'sealed_credential_invalid';
}

const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');
const HKDF_INFO = Buffer.from('packetagent/vault/sealed-credential/v1');

function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' }).subarray(X25519_SPKI_PREFIX.length);
}

function x25519FromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** An X25519 public key from base64 (or base64url): SPKI DER, or the raw 32 bytes. */
export function parseRecipientPublicKey(encoded: string): KeyObject {
  const bytes = Buffer.from(encoded, 'base64');
  let key: KeyObject;
  try {
    key = bytes.length === 32 ? x25519FromRaw(bytes) : createPublicKey({ key: bytes, format: 'der', type: 'spki' });
  } catch {
    throw new InvalidRecipientKeyError('the recipient public key is not an X25519 key (base64 SPKI DER or raw 32 bytes)');
  }
  if (key.asymmetricKeyType !== 'x25519') throw new InvalidRecipientKeyError('the recipient public key is not an X25519 key');
  return key;
}

/** Both public keys go into the key derivation and the AAD, so a sealed value is bound to this exchange. */
function sealingKey(shared: Buffer, ephemeralRaw: Buffer, recipientRaw: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephemeralRaw, recipientRaw]), HKDF_INFO, 32));
}

export function sealCredential(value: Buffer, recipientPublicKey: KeyObject): SealedCredential {
  const ephemeral = generateKeyPairSync('x25519');
  const ephemeralRaw = rawPublicKey(ephemeral.publicKey);
  const recipientRaw = rawPublicKey(recipientPublicKey);
  const key = sealingKey(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipientPublicKey }), ephemeralRaw, recipientRaw);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.concat([ephemeralRaw, recipientRaw]));
  const ciphertext = Buffer.concat([cipher.update(value), cipher.final()]);
  key.fill(0);
  return {
    ephemeralPublicKey: ephemeralRaw.toString('base64'),
    iv: iv.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/** The value sealed to `recipientPrivateKey`'s public key, as UTF-8 text. */
export function openSealedCredential(sealed: SealedCredential, recipientPrivateKey: KeyObject): string {
  try {
    const ephemeralRaw = Buffer.from(sealed.ephemeralPublicKey, 'base64');
    const ephemeral = x25519FromRaw(ephemeralRaw);
    const recipientRaw = rawPublicKey(createPublicKey(recipientPrivateKey));
    const key = sealingKey(diffieHellman({ privateKey: recipientPrivateKey, publicKey: ephemeral }), ephemeralRaw, recipientRaw);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.concat([ephemeralRaw, recipientRaw]));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    key.fill(0);
    return plain.toString('utf8');
  } catch {
    throw new SealedCredentialInvalidError('the sealed credential does not open with this key');
  }
}

/**
 * A one-use X25519 key pair for receiving one sealed credential: send `publicKey` (raw,
 * base64) with `vault.resolve`, open the answer with `privateKey`, then drop both.
 */
export function recipientKeyPair(): { publicKey: string; privateKey: KeyObject } {
  const pair = generateKeyPairSync('x25519');
  return { publicKey: rawPublicKey(pair.publicKey).toString('base64'), privateKey: pair.privateKey };
}
