import { isJsonObject, type JsonObject } from '../json';
import { PackageInvalidError } from './errors';
import { parseDsseEnvelope, type DsseEnvelope } from './dsse';
import { decodeJsonDocument, parseJsonDocument } from './json-document';

export type PackageDocument = { kind: 'package'; value: unknown } | { kind: 'envelope'; envelope: DsseEnvelope };

/**
 * Reads a document a client sent to deploy: a worker package, or a DSSE envelope of one (told
 * apart by a top-level `payloadType`). Refuses a document over MAX_PACKAGE_BYTES
 * (PackageTooLargeError) and, with PackageInvalidError, bytes that are not UTF-8, text that is
 * not JSON (located by line and column), duplicate keys at any depth, values jsonb cannot hold,
 * nesting deeper than 64 levels and a malformed envelope. A package is returned unvalidated:
 * parseWorkerPackage checks it; an envelope is opened with openEnvelope.
 */
export function readPackageDocument(raw: string | Buffer): PackageDocument {
  return packageDocumentOf(parseJsonDocument(decodeJsonDocument(raw)));
}

/**
 * Reads a request whose body is a JSON object carrying a package document in `field` (as
 * PacketADE's deploy and update send it), with the same limits and refusals as
 * readPackageDocument applied to the whole body; issue paths stay relative to the package document. Returns the document and the body's other fields.
 */
export function readPackageRequest(raw: string | Buffer, field = 'package'): { document: PackageDocument; fields: JsonObject } {
  const value = parseJsonDocument(decodeJsonDocument(raw));
  if (!isJsonObject(value)) throw new PackageInvalidError('invalid request', [{ path: '', message: `must be a JSON object with the package in "${field}"` }]);
  const { [field]: document, ...fields } = value;
  if (document === undefined) throw new PackageInvalidError('invalid request', [{ path: field, message: 'required: the worker package or its DSSE envelope' }]);
  return { document: packageDocumentOf(document), fields };
}

function packageDocumentOf(value: unknown): PackageDocument {
  if (isJsonObject(value) && Object.hasOwn(value, 'payloadType')) return { kind: 'envelope', envelope: parseDsseEnvelope(value) };
  return { kind: 'package', value };
}
