import { isJsonObject } from '../json';
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
  const value = parseJsonDocument(decodeJsonDocument(raw));
  if (isJsonObject(value) && Object.hasOwn(value, 'payloadType')) return { kind: 'envelope', envelope: parseDsseEnvelope(value) };
  return { kind: 'package', value };
}
