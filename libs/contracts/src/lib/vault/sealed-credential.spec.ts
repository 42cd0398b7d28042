import { generateKeyPairSync } from 'node:crypto';
import {
  InvalidRecipientKeyError,
  openSealedCredential,
  parseRecipientPublicKey,
  recipientKeyPair,
  sealCredential,
  SealedCredentialInvalidError,
} from './sealed-credential';

describe(openSealedCredential.name, () => {
  const value = 'xoxb-1234-sealed-value';

  it('opens a value sealed to the raw public key with its private key', () => {
    const recipient = recipientKeyPair();
    const sealed = sealCredential(Buffer.from(value), parseRecipientPublicKey(recipient.publicKey));
    expect(Buffer.from(sealed.ciphertext, 'base64').toString('utf8')).not.toContain('sealed-value');
    expect(openSealedCredential(sealed, recipient.privateKey)).toBe(value);
  });

  it('opens a value sealed to an SPKI DER public key', () => {
    const pair = generateKeyPairSync('x25519');
    const spki = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect(openSealedCredential(sealCredential(Buffer.from(value), parseRecipientPublicKey(spki)), pair.privateKey)).toBe(value);
  });

  it('refuses to open with another private key or after any part changed', () => {
    const recipient = recipientKeyPair();
    const sealed = sealCredential(Buffer.from(value), parseRecipientPublicKey(recipient.publicKey));
    expect(() => openSealedCredential(sealed, recipientKeyPair().privateKey)).toThrow(SealedCredentialInvalidError);
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => openSealedCredential({ ...sealed, ciphertext: flipped.toString('base64') }, recipient.privateKey)).toThrow(SealedCredentialInvalidError);
    const otherEphemeral = recipientKeyPair().publicKey;
    expect(() => openSealedCredential({ ...sealed, ephemeralPublicKey: otherEphemeral }, recipient.privateKey)).toThrow(SealedCredentialInvalidError);
  });

  it('refuses a recipient key that is not X25519', () => {
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect(() => parseRecipientPublicKey(ed)).toThrow(InvalidRecipientKeyError);
    expect(() => parseRecipientPublicKey('AAAA')).toThrow(InvalidRecipientKeyError);
  });
});
