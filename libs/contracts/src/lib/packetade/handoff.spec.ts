import { generateKeyPairSync } from 'node:crypto';
import { lineCol } from '../worker-definition/json-source';
import { canonicalJson, type JsonObject, type JsonValue } from '../json';
import { readPackageDocument } from './document';
import { openEnvelope, publicKeyFingerprint, signDssePayload, signWorkerPackage, type TrustedKey } from './dsse';
import { MAX_PACKAGE_BYTES } from './json-document';
import { ed25519, exampleDefinitionSource, exampleProvenance, refusal } from './packetade.testkit';
import { WORKER_PACKAGE_PAYLOAD_TYPE, createWorkerPackage, parseWorkerPackage, type ParsedWorkerPackage, type WorkerPackage } from './worker-package.v1';

// The whole handoff as the gateway reads it: the bytes of a request body, then the envelope if
// there is one, then the package.

const publisher = ed25519();
const stranger = ed25519();
const TRUSTED: TrustedKey[] = [{ fingerprint: publicKeyFingerprint(publisher.publicKey), publicKey: publisher.publicKey }];

function receive(raw: string | Buffer, trusted: readonly TrustedKey[] = TRUSTED): { parsed: ParsedWorkerPackage; signatures: Array<{ keyId: string; trusted: boolean }> } {
  const document = readPackageDocument(raw);
  if (document.kind === 'package') return { parsed: parseWorkerPackage(document.value), signatures: [] };
  const opened = openEnvelope(document.envelope, trusted);
  return { parsed: parseWorkerPackage(opened.payload), signatures: opened.signatures };
}

const pkg = (): WorkerPackage => createWorkerPackage(exampleDefinitionSource(), exampleProvenance());
/** A package changed by `change`, as JSON. */
const changed = (change: (p: JsonObject & { worker: JsonObject; provenance: JsonObject & { source: JsonObject }; requires: JsonObject }) => void): JsonObject => {
  const given = pkg() as unknown as Parameters<typeof change>[0];
  change(given);
  return given;
};
/** `value` signed by the publisher as it stands (canonical), without the validation signWorkerPackage does. */
const signed = (value: JsonObject): string => JSON.stringify(signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from(canonicalJson(value as JsonValue)), publisher.privateKey));
const envelopeOf = (text: string): JsonObject => JSON.parse(text) as JsonObject;

describe('PacketADE handoff', () => {
  it('deploys what was built: a signed package opens to the same digest as the package read directly', () => {
    const built = pkg();
    const envelope = signWorkerPackage(built, publisher.privateKey);
    const direct = receive(JSON.stringify(built, null, 2));
    const sut = receive(Buffer.from(JSON.stringify(envelope)));
    expect(sut.signatures).toEqual([{ keyId: publicKeyFingerprint(publisher.publicKey), trusted: true }]);
    expect(sut.parsed.digest).toBe(direct.parsed.digest);
    expect(sut.parsed.canonical).toBe(Buffer.from(envelope.payload, 'base64').toString('utf8'));
    expect(sut.parsed.definition.name).toBe('release-audit');
    expect(sut.parsed.package.requires).toEqual({ providers: ['preset:default'], tools: ['http_fetch', 'slack_post'], credentials: ['ops_hook', 'slack_release_channel'] });
  });

  it('reads a package signed by a key it does not trust, reporting the signer untrusted for the caller to decide', () => {
    const sut = receive(JSON.stringify(signWorkerPackage(pkg(), stranger.privateKey)));
    expect(sut.signatures).toEqual([{ keyId: publicKeyFingerprint(stranger.publicKey), trusted: false }]);
    expect(sut.parsed.digest).toBe(receive(JSON.stringify(pkg())).parsed.digest);
  });

  it('tells an envelope from a package by its payloadType', () => {
    expect(readPackageDocument(JSON.stringify(pkg())).kind).toBe('package');
    const sut = readPackageDocument(JSON.stringify(signWorkerPackage(pkg(), publisher.privateKey)));
    expect(sut.kind).toBe('envelope');
    expect(sut.kind === 'envelope' && sut.envelope.payloadType).toBe(WORKER_PACKAGE_PAYLOAD_TYPE);
  });

  describe('refuses, with the code and the path of the issue', () => {
    const editedPayload = (): string => {
      const envelope = signWorkerPackage(pkg(), publisher.privateKey);
      const bytes = Buffer.from(envelope.payload, 'base64');
      const at = bytes.indexOf('#releases');
      bytes[at + 1] = 'R'.charCodeAt(0);
      return JSON.stringify({ ...envelope, payload: bytes.toString('base64') });
    };
    const withoutEmbeddedKey = (): string => {
      const envelope = signWorkerPackage(pkg(), stranger.privateKey);
      delete envelope.signatures[0]!.publicKey;
      return JSON.stringify(envelope);
    };
    const keyOfAnother = (): string => {
      const envelope = signWorkerPackage(pkg(), stranger.privateKey);
      envelope.signatures[0]!.publicKey = ed25519().publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      return JSON.stringify(envelope);
    };
    const rsaKey = (): string => {
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'der', type: 'spki' });
      const envelope = signWorkerPackage(pkg(), stranger.privateKey);
      envelope.signatures[0] = { keyid: publicKeyFingerprint(rsa), sig: envelope.signatures[0]!.sig, publicKey: rsa.toString('base64') };
      return JSON.stringify(envelope);
    };
    const duplicateInDocument = (): [string, string] => {
      const text = `{"kind":"WorkerPackage",${JSON.stringify(pkg()).slice(1)}`;
      return [text, `(json) ${lineCol(text, text.indexOf('"kind"', 2))}`];
    };
    const duplicateInPayload = (): string => {
      const text = `{"apiVersion":"packetagent/v1",${canonicalJson(pkg() as unknown as JsonValue).slice(1)}`;
      return JSON.stringify(signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from(text), publisher.privateKey));
    };
    const oversize = (): string => JSON.stringify(changed((p) => (p.worker['description'] = 'x'.repeat(MAX_PACKAGE_BYTES))));
    const invalidUtf8 = (): Buffer => {
      const bytes = Buffer.from(JSON.stringify(pkg()));
      bytes[bytes.indexOf('Verifies')] = 0xc0;
      return bytes;
    };
    const nested = (): string => JSON.stringify(changed((p) => (p.worker['input'] = { schema: { type: 'object', default: JSON.parse(`${'['.repeat(100)}${']'.repeat(100)}`) as JsonValue } })));

    const cases: Array<[string, () => string | Buffer, string, string]> = [
      ['a payload with a byte changed after signing', editedPayload, 'signature_invalid', 'signatures[0].sig'],
      ['a signature by an unknown key that carries no key', withoutEmbeddedKey, 'signature_key_unknown', 'signatures[0].keyid'],
      ['a keyid that does not name the key carried', keyOfAnother, 'signature_keyid_mismatch', 'signatures[0].keyid'],
      ['an RSA key', rsaKey, 'signature_key_unsupported', 'signatures[0].publicKey'],
      ['another payloadType', () => JSON.stringify({ ...envelopeOf(signed(pkg() as unknown as JsonObject)), payloadType: 'application/json' }), 'package_payload_type', 'payloadType'],
      ['payload bytes that are not canonical', () => JSON.stringify(signDssePayload(WORKER_PACKAGE_PAYLOAD_TYPE, Buffer.from(JSON.stringify(pkg(), null, 2)), publisher.privateKey)), 'package_not_canonical', 'payload'],
      ['a payload that is not base64', () => JSON.stringify({ ...envelopeOf(signed(pkg() as unknown as JsonObject)), payload: 'eyJ9 ' }), 'package_invalid', 'payload'],
      ['a future apiVersion, signed', () => signed(changed((p) => (p['apiVersion'] = 'packetagent/v2'))), 'package_unsupported_version', 'apiVersion'],
      ['another kind, signed', () => signed(changed((p) => (p['kind'] = 'Worker'))), 'package_invalid', 'kind'],
      ['duplicate keys in a package document', () => duplicateInDocument()[0], 'package_invalid', duplicateInDocument()[1]],
      ['duplicate keys inside an envelope payload', duplicateInPayload, 'package_invalid', 'payload (json) 1:32'],
      ['a document over 1 MiB', oversize, 'package_too_large', '(json)'],
      ['an invalid definition', () => JSON.stringify(changed((p) => (p.worker['exit'] = { finish: { criteria: [] } }))), 'package_invalid', 'worker.exit.finish.criteria'],
      ['a commit that is a number', () => JSON.stringify(changed((p) => (p.provenance.source['commit'] = 1234567))), 'package_invalid', 'provenance.source.commit'],
      ['a builtAt that is not a date, signed', () => signed(changed((p) => (p.provenance['builtAt'] = 'last tuesday'))), 'package_invalid', 'provenance.builtAt'],
      ['an unknown top-level key', () => JSON.stringify(changed((p) => (p['signatures'] = []))), 'package_invalid', 'signatures'],
      ['requires missing a credential the definition uses', () => signed(changed((p) => (p.requires['credentials'] = ['slack_release_channel']))), 'package_invalid', 'requires.credentials'],
      ['a NUL character in a string', () => JSON.stringify(changed((p) => (p.worker['instructions'] = 'Audit\u0000'))), 'package_invalid', 'worker.instructions'],
      ['bytes that are not UTF-8', invalidUtf8, 'package_invalid', '(json)'],
      ['nesting 100 levels deep', nested, 'package_invalid', `worker.input.schema.default${'[0]'.repeat(61)}`],
    ];

    it.each(cases)('%s', (_case, document, code, path) => {
      const sut = refusal(() => receive(document()));
      expect({ code: sut.code, path: sut.issues[0]?.path }).toEqual({ code, path });
      expect(sut.issues).toHaveLength(1);
    });
  });
});
