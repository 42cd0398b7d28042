import { LineCounter, isScalar, parseAllDocuments, visit, type Document, type YAMLError } from 'yaml';
import type { ValidationIssue } from '../errors';
import { jsonIssues } from '../json';
import { DefinitionError, DefinitionTooLargeError } from './errors';
import { findDuplicateJsonKey, lineCol } from './json-source';
import { definitionErrorMap, renderPath, toValidationIssues } from './issues';
import { StoredWorkerDefinitionSchema, WorkerDefinitionSchema, type WorkerDefinition } from './schema';

export const MAX_DEFINITION_BYTES = 256 * 1024;
/** Alias expansions allowed while building a YAML document; exponential "billion laughs" documents exceed it. */
export const MAX_YAML_ALIASES = 50;

export type DefinitionFormat = 'yaml' | 'json';

/** Keys that could reach an object's prototype in code that copies definitions naively. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const INVALID = 'invalid worker definition';

function fail(issues: ValidationIssue[]): never {
  throw new DefinitionError(INVALID, issues);
}

/**
 * Parses a worker definition from its source text. Throws DefinitionTooLargeError for a source
 * over 256 KiB and DefinitionError, with every issue's path, for anything else that is not a
 * valid definition. The result has every default applied and every resource normalised.
 */
export function parseWorkerDefinition(source: string | Buffer, format: DefinitionFormat): WorkerDefinition {
  const size = typeof source === 'string' ? Buffer.byteLength(source, 'utf8') : source.byteLength;
  if (size > MAX_DEFINITION_BYTES) {
    throw new DefinitionTooLargeError('worker definition too large', [
      { path: '', message: `the definition is ${size} bytes; the limit is ${MAX_DEFINITION_BYTES} bytes (256 KiB)` },
    ]);
  }
  const text = decode(source);
  if (format === 'yaml') return validateWorkerDefinition(parseYaml(text));
  if (format === 'json') return validateWorkerDefinition(parseJson(text));
  return fail([{ path: '', message: `unsupported format ${JSON.stringify(format)} (supported: yaml, json)` }]);
}

/**
 * Validates a definition that is already a JSON value (for instance a request body parsed
 * elsewhere). Prefer parseWorkerDefinition on the source text: only it can refuse duplicate keys.
 */
export function validateWorkerDefinition(value: unknown): WorkerDefinition {
  return validateAs(WorkerDefinitionSchema, value);
}

/**
 * Validates a version as stored (or a deployment's effective definition): like a source, except
 * that each MCP server carries the tools pinned when the version was created, and every exact
 * `mcp` grant names one of them.
 */
export function validateStoredDefinition(value: unknown): WorkerDefinition {
  return validateAs(StoredWorkerDefinitionSchema, value);
}

function validateAs(schema: typeof WorkerDefinitionSchema, value: unknown): WorkerDefinition {
  const structural = jsonIssues(value);
  if (structural.length === 0) prototypeKeyIssues(value, [], structural);
  if (structural.length > 0) fail(structural);
  const result = schema.safeParse(value, { error: definitionErrorMap });
  if (!result.success) fail(toValidationIssues(result.error.issues));
  return result.data;
}

function decode(source: string | Buffer): string {
  let text: string;
  if (typeof source === 'string') {
    text = source;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(source);
    } catch {
      return fail([{ path: '', message: 'the definition is not valid UTF-8' }]);
    }
  }
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

function prototypeKeyIssues(value: unknown, path: PropertyKey[], issues: ValidationIssue[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => prototypeKeyIssues(item, [...path, index], issues));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (PROTOTYPE_KEYS.has(key)) issues.push({ path: renderPath([...path, key]), message: `the key "${key}" is not allowed` });
      else prototypeKeyIssues(item, [...path, key], issues);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// YAML

const YAML_OPTIONS = {
  version: '1.2',
  // The core schema has no custom or language-specific tags; an unknown tag is a warning,
  // which is refused below like an error.
  schema: 'core',
  uniqueKeys: true,
  merge: false,
  strict: true,
  prettyErrors: false,
} as const;

/** Enough to locate a broken document's first problems without echoing all of it. */
const MAX_YAML_ISSUES = 20;
const NESTED_TOO_DEEPLY = 'the document is nested too deeply';

function yamlMessage(error: YAMLError): string {
  // The parser reports its own stack overflow as an ordinary error.
  if (error.message.includes('Maximum call stack size exceeded')) return NESTED_TOO_DEEPLY;
  if (error.code === 'DUPLICATE_KEY') return 'duplicate key: mapping keys must be unique';
  if (error.code === 'TAG_RESOLVE_FAILED' && error.message.startsWith('Unresolved tag: ')) {
    const tag = error.message.slice('Unresolved tag: '.length).replace(/^tag:yaml\.org,2002:/, '!!');
    return `unknown tag ${tag}: tags outside the YAML core schema are not allowed`;
  }
  // The path already says where; the parser's "at line L, column C:" and its excerpt repeat it.
  return error.message.split('\n')[0]!.replace(/\s+at line \d+, column \d+:?\s*$/, '');
}

function parseYaml(text: string): unknown {
  const lineCounter = new LineCounter();
  const at = (offset: number): string => {
    const { line, col } = lineCounter.linePos(offset);
    return `(yaml) ${line}:${col}`;
  };
  try {
    const docs = parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter });
    if (!Array.isArray(docs) || docs.length === 0) return fail([{ path: '(yaml)', message: 'the document is empty' }]);
    const issues: ValidationIssue[] = [];
    const seen = new Set<string>();
    for (const doc of docs) {
      for (const problem of [...doc.errors, ...doc.warnings]) {
        const issue = { path: at(problem.pos[0]), message: yamlMessage(problem) };
        const key = issue.message === NESTED_TOO_DEEPLY ? issue.message : `${issue.path}\n${issue.message}`;
        if (!seen.has(key) && seen.size < MAX_YAML_ISSUES) issues.push(issue);
        seen.add(key);
      }
    }
    if (docs.length > 1) issues.push({ path: at(docs[1]!.range[0]), message: 'only one YAML document is allowed' });
    const doc = docs[0]!;
    let firstAlias: number | undefined;
    visit(doc, {
      Pair(_key, pair) {
        // toJS would stringify a collection key with only a process warning.
        if (!isScalar(pair.key)) {
          const node = pair.key as { range?: [number, number, number] } | null;
          issues.push({ path: at(node?.range?.[0] ?? 0), message: 'a mapping key must be a plain scalar' });
        }
      },
      Alias(_key, alias) {
        firstAlias ??= alias.range?.[0];
      },
    });
    if (issues.length > 0) return fail(issues);
    return toJs(doc, at(firstAlias ?? 0));
  } catch (error) {
    if (error instanceof DefinitionError) throw error;
    if (error instanceof RangeError) return fail([{ path: '(yaml)', message: NESTED_TOO_DEEPLY }]);
    throw error;
  }
}

function toJs(doc: Document.Parsed, aliasPosition: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      return fail([{ path: aliasPosition, message: `aliases expand beyond the limit of ${MAX_YAML_ALIASES}: refused as a resource exhaustion attack` }]);
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // The engine's message quotes the source; only the position is kept.
    const position = /position (\d+)/.exec(error instanceof Error ? error.message : '');
    return fail([{ path: position ? `(json) ${lineCol(text, Number(position[1]))}` : '(json)', message: 'not valid JSON' }]);
  }
  const duplicate = findDuplicateJsonKey(text);
  if (duplicate) {
    fail([{ path: `(json) ${lineCol(text, duplicate.offset)}`, message: `duplicate key ${JSON.stringify(duplicate.key)}: object keys must be unique` }]);
  }
  return value;
}
