import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { CredentialUndecryptableError, MasterKeyUnavailableError } from '../shared/errors';
import type { MasterKey, MasterKeyRing } from '../keys/master-key-ring';

/** The record a ciphertext belongs to; it is authenticated with it, so a copy elsewhere does not decrypt. */
export interface RecordBinding {
  workspaceId: string;
  name: string;
  version: number;
}

export interface EncryptedRecord {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  /** iv (12) || encrypted data key (32) || tag (16), under the master key `keyId`. */
  wrappedKey: Buffer;
  keyId: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const DATA_KEY_BYTES = 32;

// JSON arrays keep the fields apart without a separator a name could contain.
function valueAad(binding: RecordBinding): Buffer {
  return Buffer.from(JSON.stringify(['packetagent/vault/value/v1', binding.workspaceId, binding.name, binding.version]));
}

function wrapAad(keyId: string, binding: RecordBinding): Buffer {
  return Buffer.from(JSON.stringify(['packetagent/vault/data-key/v1', keyId, binding.workspaceId, binding.name, binding.version]));
}

function seal(key: Buffer, plain: Buffer, aad: Buffer): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

function open(key: Buffer, sealed: { iv: Buffer; ciphertext: Buffer; tag: Buffer }, aad: Buffer): Buffer | null {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv);
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    return null;
  }
}

function wrap(dataKey: Buffer, masterKey: MasterKey, binding: RecordBinding): Buffer {
  const { iv, ciphertext, tag } = seal(masterKey.key, dataKey, wrapAad(masterKey.id, binding));
  return Buffer.concat([iv, ciphertext, tag]);
}

function unwrap(record: Pick<EncryptedRecord, 'wrappedKey' | 'keyId'>, ring: MasterKeyRing, binding: RecordBinding): Buffer {
  const masterKey = ring.get(record.keyId);
  if (!masterKey) throw new MasterKeyUnavailableError(binding.name, record.keyId);
  const wrapped = record.wrappedKey;
  const dataKey =
    wrapped.length === IV_BYTES + DATA_KEY_BYTES + TAG_BYTES
      ? open(
          masterKey.key,
          { iv: wrapped.subarray(0, IV_BYTES), ciphertext: wrapped.subarray(IV_BYTES, IV_BYTES + DATA_KEY_BYTES), tag: wrapped.subarray(IV_BYTES + DATA_KEY_BYTES) },
          wrapAad(masterKey.id, binding),
        )
      : null;
  if (!dataKey) throw new CredentialUndecryptableError(binding.name, 'data key');
  return dataKey;
}

/** A fresh data key for this version encrypts the value; the current master key wraps the data key. */
export function encryptValue(value: Buffer, binding: RecordBinding, ring: MasterKeyRing): EncryptedRecord {
  const dataKey = randomBytes(DATA_KEY_BYTES);
  try {
    const sealed = seal(dataKey, value, valueAad(binding));
    return { ...sealed, wrappedKey: wrap(dataKey, ring.current, binding), keyId: ring.current.id };
  } finally {
    dataKey.fill(0);
  }
}

export function decryptValue(record: EncryptedRecord, binding: RecordBinding, ring: MasterKeyRing): Buffer {
  const dataKey = unwrap(record, ring, binding);
  try {
    const plain = open(dataKey, record, valueAad(binding));
    if (!plain) throw new CredentialUndecryptableError(binding.name, 'value');
    return plain;
  } finally {
    dataKey.fill(0);
  }
}

/** The same data key under the current master key; the value's ciphertext is untouched. */
export function rewrapDataKey(record: Pick<EncryptedRecord, 'wrappedKey' | 'keyId'>, binding: RecordBinding, ring: MasterKeyRing): Pick<EncryptedRecord, 'wrappedKey' | 'keyId'> {
  const dataKey = unwrap(record, ring, binding);
  try {
    return { wrappedKey: wrap(dataKey, ring.current, binding), keyId: ring.current.id };
  } finally {
    dataKey.fill(0);
  }
}
