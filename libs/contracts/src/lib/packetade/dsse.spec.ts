import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import { canonicalJson, type JsonValue } from '../json';
import {
  DsseEnvelopeSchema,
  openEnvelope,
  parseDsseEnvelope,
  preAuthEncoding,
  publicKeyFingerprint,
  signDssePayload,
  signWorkerPackage,
  type DsseEnvelope,
  type TrustedKey,
} from './dsse';
import {
  EnvelopePayloadTypeError,
  PackageInvalidError,
  PackageNotCanonicalError,
  SignatureInvalidError,
  SignatureKeyIdMismatchError,
  SignatureKeyUnknownError,
  SignatureKeyUnsupportedError,
} from './errors';
import { ed25519, exampleDefinitionSource, exampleProvenance, refusal, type KeyPair } from './packetade.testkit';
import { WORKER_PACKAGE_PAYLOAD_TYPE, createWorkerPackage, type WorkerPackage } from './worker-package.v1';

const pkg = (): WorkerPackage => createWorkerPackage(exampleDefinitionSource(), exampleProvenance());
const der = (pair: KeyPair): Buffer => pair.publicKey.export({ format: 'der', type: 'spki' });
const trust = (pair: KeyPair): TrustedKey => ({ fingerprint: publicKeyFingerprint(pair.publicKey), publicKey: pair.publicKey });
/** `envelope` with its first signature changed. */
const withSignature = (envelope: DsseEnvelope, change: Partial<DsseEnvelope['signatures'][number]>): DsseEnvelope => ({
  ...envelope,
  signatures: [{ ...envelope.signatures[0]!, ...change }],
});

describe(preAuthEncoding.name, () => {
  it('matches the test vector of the DSSE protocol', () => {
    expect(preAuthEncoding('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).toBe('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  });

  it('counts lengths in bytes, not characters, and keeps the body as bytes', () => {
    const body = Buffer.from([0xff, 0x00, 0x20]);
    expect(preAuthEncoding('tÿpe', body)).toEqual(Buffer.concat([Buffer.from('DSSEv1 5 tÿpe 3 '), body]));
    expect(preAuthEncoding('', Buffer.alloc(0)).toString()).toBe('DSSEv1 0  0 ');
  });
});

describe(publicKeyFingerprint.name, () => {
  it('is SHA256: and the hex SHA-256 of the SPKI DER, whichever form the key is given in', () => {
    const pair = ed25519();
    const expected = `SHA256:${createHash('sha256').update(der(pair)).digest('hex')}`;
    expect(expected).toMatch(/^SHA256:[0-9a-f]{64}$/);
    expect(publicKeyFingerprint(pair.publicKey)).toBe(expected);
    expect(publicKeyFingerprint(pair.privateKey)).toBe(expected);
    expect(publicKeyFingerprint(pair.publicKey.export({ format: 'pem', type: 'spki' }) as string)).toBe(expected);
    expect(publicKeyFingerprint(der(pair))).toBe(expected);
  });

  it('tells keys apart', () => {
    expect(publicKeyFingerprint(ed25519().publicKey)).not.toBe(publicKeyFingerprint(ed25519().publicKey));
  });
});

describe(signWorkerPackage.name, () => {
  it('signs the canonical bytes of the package, naming and carrying the key', () => {
    const pair = ed25519();
    const given = pkg();
    const sut = signWorkerPackage(given, pair.privateKey);
    const payload = Buffer.from(canonicalJson(given as unknown as JsonValue), 'utf8');
    expect(sut).toEqual({
      payloadType: 'application/vnd.packetagent.worker-package+json',
      payload: payload.toString('base64'),
      signatures: [{ keyid: publicKeyFingerprint(pair.publicKey), sig: expect.any(String), publicKey: der(pair).toString('base64') }],
    });
    expect(verify(null, preAuthEncoding(WORKER_PACKAGE_PAYLOAD_TYPE, payload), pair.publicKey, Buffer.from(sut.signatures[0]!.sig, 'base64'))).toBe(true);
    expect(DsseEnvelopeSchema.safeParse(sut).success).toBe(true);
  });

  it('accepts the private key as PEM and gives the same envelope (Ed25519 is deterministic)', () => {
    const pair = ed25519();
    const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    expect(signWorkerPackage(pkg(), pem)).toEqual(signWorkerPackage(pkg(), pair.privateKey));
  });

  it('refuses to sign an invalid package', () => {
    const given = { ...pkg(), kind: 'Worker' } as unknown as WorkerPackage;
    const sut = refusal(() => signWorkerPackage(given, ed25519().privateKey));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues).toEqual([{ path: 'kind', message: 'must be "WorkerPackage"' }]);
  });

  it('refuses an RSA key, a public key and text that is not a key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(refusal(() => signWorkerPackage(pkg(), rsa.privateKey))).toBeInstanceOf(SignatureKeyUnsupportedError);
    expect(refusal(() => signWorkerPackage(pkg(), rsa.privateKey)).issues).toEqual([{ path: '', message: 'a rsa key: only Ed25519 keys sign worker packages' }]);
    expect(refusal(() => signWorkerPackage(pkg(), ed25519().publicKey)).issues).toEqual([{ path: '', message: 'signing needs a private key' }]);
    expect(refusal(() => signWorkerPackage(pkg(), 'not a key')).code).toBe('signature_key_unsupported');
  });
});

describe(parseDsseEnvelope.name, () => {
  const envelope = (): DsseEnvelope => signWorkerPackage(pkg(), ed25519().privateKey);

  it.each<[string, (e: Record<string, unknown> & DsseEnvelope) => void, string, string]>([
    ['a payload with characters outside base64', (e) => (e.payload = `${e.payload.slice(0, -4)}*!==`), 'payload', 'must be standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=")'],
    ['a payload in URL-safe base64', (e) => (e.payload = Buffer.from([0xfb, 0xff]).toString('base64url')), 'payload', 'must be standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=")'],
    ['a payload without its padding', (e) => (e.payload = 'YWI'), 'payload', 'must be standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=")'],
    ['a payload with bits set past its last byte', (e) => (e.payload = 'YWJ='), 'payload', 'must be canonical base64: the unused bits of the last character must be zero'],
    ['a signature that is not base64', (e) => (e.signatures[0]!.sig = 'sig nature'), 'signatures[0].sig', 'must be standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=")'],
    ['a publicKey that is not base64', (e) => (e.signatures[0]!.publicKey = '-----BEGIN PUBLIC KEY-----'), 'signatures[0].publicKey', 'must be standard base64 (A-Z, a-z, 0-9, "+", "/", padded with "=")'],
    ['no signature', (e) => (e.signatures = []), 'signatures', 'must not be empty'],
    ['more than 8 signatures', (e) => (e.signatures = Array.from({ length: 9 }, (_, i) => ({ keyid: `k${i}`, sig: 'AA==' }))), 'signatures', 'must have at most 8 items'],
    ['two signatures by one key', (e) => e.signatures.push({ ...e.signatures[0]! }), 'signatures[1].keyid', 'duplicate of signatures[0].keyid: one signature per key'],
    ['an unknown key', (e) => (e['signed'] = true), 'signed', 'unknown key (allowed: payloadType, payload, signatures)'],
    ['an unknown signature key', (e) => ((e.signatures[0] as Record<string, unknown>)['cert'] = 'x'), 'signatures[0].cert', 'unknown key (allowed: keyid, sig, publicKey)'],
    ['a missing payloadType', (e) => delete (e as Partial<DsseEnvelope>).payloadType, 'payloadType', 'required'],
  ])('refuses %s', (_case, change, path, message) => {
    const given = envelope() as Record<string, unknown> & DsseEnvelope;
    change(given);
    const sut = refusal(() => parseDsseEnvelope(given));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues).toEqual([{ path, message }]);
  });

  it('accepts an empty payload, which is base64 of no bytes', () => {
    expect(parseDsseEnvelope({ ...envelope(), payload: '' }).payload).toBe('');
  });
});

describe(openEnvelope.name, () => {
  const alice = ed25519();
  const bob = ed25519();

  it('returns the payload and reports a trusted signer', () => {
    const given = pkg();
    const sut = openEnvelope(signWorkerPackage(given, alice.privateKey), [trust(alice)]);
    expect(sut.payload).toEqual(given);
    expect(sut.payloadBytes.toString('utf8')).toBe(canonicalJson(given as unknown as JsonValue));
    expect(sut.signatures).toEqual([{ keyId: publicKeyFingerprint(alice.publicKey), trusted: true }]);
  });

  it('accepts a trusted key given as PEM', () => {
    const pem = alice.publicKey.export({ format: 'pem', type: 'spki' }) as string;
    const sut = openEnvelope(signWorkerPackage(pkg(), alice.privateKey), [{ fingerprint: publicKeyFingerprint(pem), publicKey: pem }]);
    expect(sut.signatures[0]?.trusted).toBe(true);
  });

  it('verifies an untrusted signer with the key it carries and reports it untrusted', () => {
    const sut = openEnvelope(signWorkerPackage(pkg(), bob.privateKey), [trust(alice)]);
    expect(sut.signatures).toEqual([{ keyId: publicKeyFingerprint(bob.publicKey), trusted: false }]);
  });

  it('checks a trusted keyid with the trusted key, ignoring the key the signature carries', () => {
    const envelope = withSignature(signWorkerPackage(pkg(), alice.privateKey), { publicKey: der(bob).toString('base64') });
    expect(openEnvelope(envelope, [trust(alice)]).signatures).toEqual([{ keyId: publicKeyFingerprint(alice.publicKey), trusted: true }]);
  });

  it('reports every signature of an envelope signed by several keys', () => {
    const one = signWorkerPackage(pkg(), alice.privateKey);
    const two = signWorkerPackage(pkg(), bob.privateKey);
    const sut = openEnvelope({ ...one, signatures: [...one.signatures, ...two.signatures] }, [trust(alice)]);
    expect(sut.signatures).toEqual([
      { keyId: publicKeyFingerprint(alice.publicKey), trusted: true },
      { keyId: publicKeyFingerprint(bob.publicKey), trusted: false },
    ]);
  });

  it('refuses an envelope when one of its signatures does not verify, naming it', () => {
    const one = signWorkerPackage(pkg(), alice.privateKey);
    const other = signWorkerPackage({ ...pkg(), provenance: { ...exampleProvenance(), builtBy: 'someone else' } }, bob.privateKey);
    const sut = refusal(() => openEnvelope({ ...one, signatures: [...one.signatures, ...other.signatures] }, [trust(alice)]));
    expect(sut).toBeInstanceOf(SignatureInvalidError);
    expect(sut.issues).toEqual([{ path: 'signatures[1].sig', message: `the signature by ${publicKeyFingerprint(bob.publicKey)} does not verify over the payload` }]);
  });

  it('refuses a payload changed after signing', () => {
    const envelope = signWorkerPackage(pkg(), alice.privateKey);
    const text = Buffer.from(envelope.payload, 'base64').toString('utf8').replace('release-audit', 'release-audiT');
    const sut = refusal(() => openEnvelope({ ...envelope, payload: Buffer.from(text).toString('base64') }, [trust(alice)]));
    expect(sut).toBeInstanceOf(SignatureInvalidError);
    expect(sut.code).toBe('signature_invalid');
    expect(sut.issues[0]?.path).toBe('signatures[0].sig');
  });

  it('refuses a signature made over another payloadType, which the encoding binds', () => {
    const payload = Buffer.from(canonicalJson(pkg() as unknown as JsonValue));
    const envelope = { ...signDssePayload('application/json', payload, alice.privateKey), payloadType: WORKER_PACKAGE_PAYLOAD_TYPE };
    expect(refusal(() => openEnvelope(envelope, [trust(alice)]))).toBeInstanceOf(SignatureInvalidError);
  });

  it('refuses a signature of the wrong length as invalid', () => {
    const envelope = withSignature(signWorkerPackage(pkg(), alice.privateKey), { sig: Buffer.alloc(12).toString('base64') });
    expect(refusal(() => openEnvelope(envelope, [trust(alice)])).code).toBe('signature_invalid');
  });

  it('refuses another payloadType before reading the payload', () => {
    const envelope = signDssePayload('application/vnd.in-toto+json', Buffer.from('{}'), alice.privateKey);
    const sut = refusal(() => openEnvelope(envelope, [trust(alice)]));
    expect(sut).toBeInstanceOf(EnvelopePayloadTypeError);
    expect(sut.code).toBe('package_payload_type');
    expect(sut.issues).toEqual([{ path: 'payloadType', message: 'must be "application/vnd.packetagent.worker-package+json", got "application/vnd.in-toto+json"' }]);
  });

  it('refuses a signature by an unknown key that carries no key', () => {
    const envelope = signWorkerPackage(pkg(), bob.privateKey);
    delete envelope.signatures[0]!.publicKey;
    const sut = refusal(() => openEnvelope(envelope, [trust(alice)]));
    expect(sut).toBeInstanceOf(SignatureKeyUnknownError);
    expect(sut.code).toBe('signature_key_unknown');
    expect(sut.issues).toEqual([{ path: 'signatures[0].keyid', message: `${publicKeyFingerprint(bob.publicKey)} is not a trusted key and the signature carries no publicKey` }]);
  });

  it('refuses a keyid that is not the fingerprint of the key the signature carries', () => {
    const envelope = withSignature(signWorkerPackage(pkg(), bob.privateKey), { keyid: publicKeyFingerprint(ed25519().publicKey) });
    const sut = refusal(() => openEnvelope(envelope, [trust(alice)]));
    expect(sut).toBeInstanceOf(SignatureKeyIdMismatchError);
    expect(sut.code).toBe('signature_keyid_mismatch');
    expect(sut.issues[0]?.path).toBe('signatures[0].keyid');
  });

  it('refuses a keyid trusted under a key with another fingerprint', () => {
    const envelope = signWorkerPackage(pkg(), alice.privateKey);
    const misconfigured = { fingerprint: publicKeyFingerprint(alice.publicKey), publicKey: bob.publicKey };
    expect(refusal(() => openEnvelope(envelope, [misconfigured])).code).toBe('signature_keyid_mismatch');
  });

  it('refuses an RSA key carried by a signature, whatever it signed', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsaDer = rsa.publicKey.export({ format: 'der', type: 'spki' });
    const envelope = withSignature(signWorkerPackage(pkg(), alice.privateKey), { keyid: publicKeyFingerprint(rsaDer), publicKey: rsaDer.toString('base64') });
    const sut = refusal(() => openEnvelope(envelope, []));
    expect(sut).toBeInstanceOf(SignatureKeyUnsupportedError);
    expect(sut.issues).toEqual([{ path: 'signatures[0].publicKey', message: 'a rsa key: only Ed25519 keys sign worker packages' }]);
  });

  it('refuses a carried key that is not SPKI DER', () => {
    const envelope = withSignature(signWorkerPackage(pkg(), alice.privateKey), { publicKey: Buffer.from('not a key').toString('base64') });
    const sut = refusal(() => openEnvelope(envelope, []));
    expect(sut.code).toBe('signature_key_unsupported');
    expect(sut.issues).toEqual([{ path: 'signatures[0].publicKey', message: 'publicKey is not a public key (SPKI DER)' }]);
  });

  describe('refuses a signed payload that is not canonical JSON', () => {
    const canonical = canonicalJson(pkg() as unknown as JsonValue);
    it.each([
      ['indented', JSON.stringify(pkg(), null, 2)],
      ['with its keys out of order', JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(canonical) as object).reverse()))],
      ['with a trailing newline', `${canonical}\n`],
      ['with an escape where the character is canonical', canonical.replace('release-audit', 'release\\u002daudit')],
      ['with a byte order mark', `\uFEFF${canonical}`],
    ])('%s', (_case, text) => {
      const envelope = signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from(text, 'utf8'), alice.privateKey);
      const sut = refusal(() => openEnvelope(envelope, [trust(alice)]));
      expect(sut).toBeInstanceOf(PackageNotCanonicalError);
      expect(sut.code).toBe('package_not_canonical');
      expect(sut.issues[0]?.path).toBe('payload');
    });
  });

  it('refuses a signed payload that is not UTF-8 as not canonical', () => {
    const envelope = signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from([0x22, 0xc3, 0x28, 0x22]), alice.privateKey);
    expect(refusal(() => openEnvelope(envelope, [trust(alice)])).issues).toEqual([{ path: 'payload', message: 'the payload is not valid UTF-8' }]);
  });

  it('refuses a signed payload with duplicate keys, at their position in the payload', () => {
    const envelope = signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from('{"kind":"WorkerPackage","kind":"Worker"}'), alice.privateKey);
    const sut = refusal(() => openEnvelope(envelope, [trust(alice)]));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues).toEqual([{ path: 'payload (json) 1:25', message: 'duplicate key "kind": object keys must be unique' }]);
  });

  it('refuses a signed payload nested deeper than 64 levels', () => {
    const envelope = signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from(`${'['.repeat(100)}${']'.repeat(100)}`), alice.privateKey);
    expect(refusal(() => openEnvelope(envelope, [trust(alice)])).issues).toEqual([{ path: `payload${'[0]'.repeat(65)}`, message: 'nested deeper than 64 levels' }]);
  });
});
