import { randomBytes } from 'node:crypto';
import { MasterKeyRing, masterKeyId, type MasterKey } from '../keys/master-key-ring';
import { CredentialUndecryptableError, MasterKeyUnavailableError } from '../shared/errors';
import { decryptValue, encryptValue, rewrapDataKey } from './envelope-cipher';

const masterKey = (): MasterKey => {
  const key = randomBytes(32);
  return { id: masterKeyId(key), key };
};
const binding = { workspaceId: 'ws_a', name: 'github_token', version: 1 };
const secret = Buffer.from('ghp_envelopeSecret123');

describe(encryptValue.name, () => {
  const current = masterKey();
  const ring = new MasterKeyRing([current]);

  it('decrypts what it encrypted, and the record holds neither the value nor the data key in clear', () => {
    const record = encryptValue(secret, binding, ring);
    expect(record.keyId).toBe(current.id);
    expect(record.ciphertext.includes(secret)).toBe(false);
    expect(decryptValue(record, binding, ring).equals(secret)).toBe(true);
  });

  it('uses a fresh data key and iv for every version', () => {
    const [a, b] = [encryptValue(secret, binding, ring), encryptValue(secret, binding, ring)];
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
  });

  it('refuses a record bound to another workspace, name or version', () => {
    const record = encryptValue(secret, binding, ring);
    for (const other of [{ ...binding, workspaceId: 'ws_b' }, { ...binding, name: 'other_token' }, { ...binding, version: 2 }]) {
      expect(() => decryptValue(record, other, ring)).toThrow(CredentialUndecryptableError);
    }
  });

  it('refuses a tampered ciphertext, tag or wrapped key', () => {
    const record = encryptValue(secret, binding, ring);
    const flip = (bytes: Buffer) => {
      const copy = Buffer.from(bytes);
      copy[0] = copy[0]! ^ 1;
      return copy;
    };
    expect(() => decryptValue({ ...record, ciphertext: flip(record.ciphertext) }, binding, ring)).toThrow('the stored value does not authenticate');
    expect(() => decryptValue({ ...record, tag: flip(record.tag) }, binding, ring)).toThrow('the stored value does not authenticate');
    expect(() => decryptValue({ ...record, wrappedKey: flip(record.wrappedKey) }, binding, ring)).toThrow('the stored data key does not authenticate');
  });

  it('refuses a record under a key the ring lacks, and one whose key id was relabelled', () => {
    const record = encryptValue(secret, binding, ring);
    const other = masterKey();
    expect(() => decryptValue(record, binding, new MasterKeyRing([other]))).toThrow(MasterKeyUnavailableError);
    // The same bytes labelled with another id the ring holds: the id is authenticated too.
    expect(() => decryptValue({ ...record, keyId: other.id }, binding, new MasterKeyRing([other, current]))).toThrow(CredentialUndecryptableError);
  });

  it('re-wraps under the new current key so the old key can be dropped', () => {
    const record = encryptValue(secret, binding, ring);
    const next = masterKey();
    const rewrapped = { ...record, ...rewrapDataKey(record, binding, new MasterKeyRing([next, current])) };
    expect(rewrapped.keyId).toBe(next.id);
    expect(decryptValue(rewrapped, binding, new MasterKeyRing([next])).equals(secret)).toBe(true);
  });
});
