import { isStorableText, type ValidationIssue } from '@packetagent/contracts';

/**
 * Limits on what a client may send, checked once at the HTTP boundary before any route reads it.
 * No definition, override or event in the product nests anywhere near this deep; the limit is
 * there so that recursive code behind the boundary (schemas, canonical JSON, YAML) never meets a
 * document deep enough to exhaust the stack.
 */
export const MAX_NESTING_DEPTH = 64;

/** NUL, which Postgres text cannot hold, or a UTF-16 surrogate without its pair, which is no character at all. */
export function hasInvalidCharacter(text: string): boolean {
  return !isStorableText(text);
}

export interface InputFinding {
  /** Where, as route validation names it: a path or query parameter by its name (`id`, `cursor`), a body field from the body's root (`tools.0.name`). */
  issues: ValidationIssue[];
  /** Deeper than MAX_NESTING_DEPTH; the walk stops there. */
  tooDeep: boolean;
}

const INVALID_CHARACTER_MESSAGE = 'contains a NUL character or an unpaired UTF-16 surrogate';
/** One field is enough to act on; a body full of them need not be listed in full. */
const MAX_LISTED = 20;

const child = (path: string, segment: string | number): string => (path ? `${path}.${segment}` : String(segment));

/**
 * Walks a parsed JSON value without recursion, reporting every string (key or value) holding an
 * invalid character, and whether it nests deeper than MAX_NESTING_DEPTH. Paths start at the
 * value's root; `whole` names the value itself when it is one string.
 */
export function inspectJson(value: unknown, whole: string): InputFinding {
  const issues: ValidationIssue[] = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  while (stack.length) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (issues.length < MAX_LISTED && hasInvalidCharacter(current)) issues.push({ path: path || whole, message: INVALID_CHARACTER_MESSAGE });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_NESTING_DEPTH) return { issues, tooDeep: true };
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) stack.push({ value: current[index], path: child(path, index), depth: depth + 1 });
      continue;
    }
    // Pushed last to first, so issues are listed in document order.
    for (const [key, value] of Object.entries(current as Record<string, unknown>).reverse()) {
      const printable = hasInvalidCharacter(key) ? '(key)' : key;
      if (printable === '(key)' && issues.length < MAX_LISTED) issues.push({ path: child(path, printable), message: INVALID_CHARACTER_MESSAGE });
      stack.push({ value, path: child(path, printable), depth: depth + 1 });
    }
  }
  return { issues, tooDeep: false };
}

/** Checks a string-valued map (path parameters, the query) the same way: flat, or arrays of strings for repeated query keys. */
export function inspectFields(fields: unknown): ValidationIssue[] {
  if (fields === null || typeof fields !== 'object') return [];
  return inspectJson(fields, '').issues;
}

/**
 * The nesting depth of YAML text, over-estimated from its surface: indentation levels of block
 * collections, compact `- - x` entries on one line, and flow `[`/`{` brackets outside quotes and
 * comments. A linear scan: the YAML parser behind the boundary recurses, this does not.
 */
export function yamlNestingDepth(text: string): number {
  let deepest = 0;
  let flow = 0;
  const indents: number[] = [];
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    const content = line.slice(indent);
    if (flow === 0 && content !== '' && !content.startsWith('#')) {
      while (indents.length && indents[indents.length - 1]! >= indent) indents.pop();
      indents.push(indent);
    }
    const compact = /^(?:[-?:][ \t]+)*/.exec(content)![0].replace(/[ \t]/g, '').length;
    let quote: string | null = null;
    let lineFlowPeak = flow;
    for (let index = 0; index < content.length; index++) {
      const char = content[index]!;
      if (quote) {
        if (char === quote) quote = null;
        continue;
      }
      // A quote opens a scalar only where one may start; `don't` is a plain word.
      if ((char === '"' || char === "'") && (index === 0 || /[\s[{,:]/.test(content[index - 1]!))) quote = char;
      else if (char === '#' && (index === 0 || /\s/.test(content[index - 1]!))) break;
      else if (char === '[' || char === '{') lineFlowPeak = Math.max(lineFlowPeak, ++flow);
      else if ((char === ']' || char === '}') && flow > 0) flow--;
    }
    deepest = Math.max(deepest, indents.length + compact + lineFlowPeak);
  }
  return deepest;
}
