import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { ValidationError, type ValidationIssue } from './errors';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** RFC 8785 (JSON Canonicalization Scheme) serialisation of a JSON value. */
export function canonicalJson(value: JsonValue): string {
  const text = canonicalize(value);
  if (text === undefined) {
    throw new ValidationError('value has no canonical JSON form');
  }
  return text;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text Postgres can store and that is text at all: no NUL character (jsonb and text refuse it), no lone UTF-16 surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/**
 * Collects every reason `value` is not plain JSON that survives a round trip through Postgres
 * jsonb unchanged: no undefined, functions, symbols, bigints, non-finite numbers, class
 * instances (Date, Map, Buffer...), NUL characters (jsonb refuses them) or lone surrogates.
 */
export function jsonIssues(value: unknown, path = '', issues: ValidationIssue[] = [], depth = 0): ValidationIssue[] {
  if (depth > 64) {
    issues.push({ path, message: 'nested deeper than 64 levels' });
    return issues;
  }
  if (value === null || typeof value === 'boolean') return issues;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) issues.push({ path, message: 'string contains a NUL character' });
    else if (LONE_SURROGATE.test(value)) issues.push({ path, message: 'string contains a lone UTF-16 surrogate' });
    return issues;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) issues.push({ path, message: 'number is not finite' });
    return issues;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => jsonIssues(item, `${path}[${index}]`, issues, depth + 1));
    return issues;
  }
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      issues.push({ path, message: `${prototype?.constructor?.name ?? 'object'} is not a plain JSON object` });
      return issues;
    }
    for (const [key, item] of Object.entries(value)) {
      const itemPath = path ? `${path}.${key}` : key;
      if (!isStorableText(key)) {
        issues.push({ path: itemPath, message: 'key is not valid text' });
      }
      jsonIssues(item, itemPath, issues, depth + 1);
    }
    return issues;
  }
  issues.push({ path, message: `${typeof value} is not a JSON value` });
  return issues;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
