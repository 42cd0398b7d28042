import type { ValidationIssue } from '../errors';
import { jsonIssues } from '../json';
import { findDuplicateJsonKey, jsonSyntaxErrorOffset, lineCol } from '../worker-definition/json-source';
import { PackageInvalidError, PackageTooLargeError } from './errors';

/** The largest package document (or envelope) read, in bytes: 1 MiB. */
export const MAX_PACKAGE_BYTES = 1024 * 1024;

const INVALID = 'invalid worker package';

/**
 * The text of a JSON document given as text or bytes: at most MAX_PACKAGE_BYTES, valid UTF-8
 * (the offset of the first invalid byte is named), a leading byte order mark dropped.
 * `where` prefixes the issue paths (`payload ` for an envelope's payload).
 */
export function decodeJsonDocument(raw: string | Buffer, where = ''): string {
  const size = typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : raw.byteLength;
  if (size > MAX_PACKAGE_BYTES) {
    throw new PackageTooLargeError('worker package too large', [
      { path: `${where}(json)`, message: `the document is ${size} bytes; the limit is ${MAX_PACKAGE_BYTES} bytes (1 MiB)` },
    ]);
  }
  let text: string;
  if (typeof raw === 'string') {
    text = raw;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    } catch {
      throw new PackageInvalidError(INVALID, [{ path: `${where}(json)`, message: `not valid UTF-8: the sequence at byte ${invalidUtf8Offset(raw)} is malformed` }]);
    }
  }
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/**
 * Parses JSON text, refusing what JSON.parse would accept silently or what could not be stored:
 * duplicate object keys at any depth, NUL characters, lone surrogates and nesting deeper than 64
 * levels. A syntax error is located by line and column; the engine's message, which may quote
 * the source, is not kept.
 */
export function parseJsonDocument(text: string, where = ''): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new PackageInvalidError(INVALID, [{ path: syntaxErrorPath(text, error, where), message: 'not valid JSON' }]);
  }
  const duplicate = findDuplicateJsonKey(text);
  if (duplicate) {
    throw new PackageInvalidError(INVALID, [
      { path: `${where}(json) ${lineCol(text, duplicate.offset)}`, message: `duplicate key ${JSON.stringify(duplicate.key)}: object keys must be unique` },
    ]);
  }
  const prefix = where.trim();
  const structural = jsonIssues(value).map((issue) => prefixIssue(prefix, issue));
  if (structural.length > 0) throw new PackageInvalidError(INVALID, structural);
  return value;
}

/** `issue` with its path under `prefix` (`worker` + `name` → `worker.name`, + `[0]` → `worker[0]`). */
export function prefixIssue(prefix: string, issue: ValidationIssue): ValidationIssue {
  if (!prefix) return issue;
  if (!issue.path) return { path: prefix, message: issue.message };
  return { path: issue.path.startsWith('[') ? `${prefix}${issue.path}` : `${prefix}.${issue.path}`, message: issue.message };
}

function syntaxErrorPath(text: string, error: unknown, where: string): string {
  let offset = jsonSyntaxErrorOffset(text);
  if (offset < 0) {
    // JSON.parse refused what the locator accepts: fall back on the position the engine names, if any.
    const position = /position (\d+)/.exec(error instanceof Error ? error.message : '');
    if (!position) return `${where}(json)`;
    offset = Number(position[1]);
  }
  return `${where}(json) ${lineCol(text, offset)}`;
}

/**
 * Offset of the first byte sequence that is not UTF-8 (a stray continuation byte, an overlong
 * form, an encoded surrogate, a code point beyond U+10FFFF, a truncated sequence); -1 if none.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      if (lead === 0xe0) low = 0xa0; // overlong
      if (lead === 0xed) high = 0x9f; // UTF-16 surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      if (lead === 0xf0) low = 0x90; // overlong
      if (lead === 0xf4) high = 0x8f; // beyond U+10FFFF
    } else return i;
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf];
      if (next === undefined || next < min || next > max) return i;
    }
    i += length;
  }
  return -1;
}
