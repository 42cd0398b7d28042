// Positions and duplicate keys in JSON source text, shared by every reader of JSON documents
// that must refuse what JSON.parse accepts silently.

/** `line:col` (both from 1) of a UTF-16 offset into `text`. */
export function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  return `${line}:${col}`;
}

/**
 * JSON.parse keeps the last of duplicate keys silently, and other parsers keep the first; a
 * document whose meaning depends on the parser is refused. Returns the first duplicate key, at
 * any depth, and its offset; `text` is known to be valid JSON.
 */
export function findDuplicateJsonKey(text: string): { offset: number; key: string } | null {
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const keys = stack[stack.length - 1];
      if (keys && expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return { offset: i, key };
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (char === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (char === '[') {
      stack.push(null);
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      expectKey = stack[stack.length - 1] instanceof Set;
    }
  }
  return null;
}

type Expect = 'value' | 'value-or-end' | 'key' | 'key-or-end' | 'colon' | 'comma-or-end' | 'done';

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const HEX4 = /^[0-9A-Fa-f]{4}$/;

/**
 * Offset of the first character of `text` that is not valid JSON (`text.length` when it ends
 * early), or -1 when it is valid. Newer engines word some JSON.parse errors without a position,
 * quoting the source instead; this locates the error without the source in the message.
 */
export function jsonSyntaxErrorOffset(text: string): number {
  const stack: Array<'[' | '{'> = [];
  let expect: Expect = 'value';
  let i = 0;
  const afterValue = (): Expect => (stack.length > 0 ? 'comma-or-end' : 'done');
  for (;;) {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
    if (i >= text.length) return expect === 'done' ? -1 : text.length;
    const char = text[i]!;
    switch (expect) {
      case 'done':
        return i;
      case 'colon':
        if (char !== ':') return i;
        i++;
        expect = 'value';
        break;
      case 'comma-or-end': {
        const inArray = stack[stack.length - 1] === '[';
        if (char === ',') {
          expect = inArray ? 'value' : 'key';
        } else if (char === (inArray ? ']' : '}')) {
          stack.pop();
          expect = afterValue();
        } else return i;
        i++;
        break;
      }
      case 'key':
      case 'key-or-end':
        if (expect === 'key-or-end' && char === '}') {
          stack.pop();
          i++;
          expect = afterValue();
        } else if (char === '"') {
          const end = stringEnd(text, i);
          if (end < 0) return ~end;
          i = end;
          expect = 'colon';
        } else return i;
        break;
      case 'value':
      case 'value-or-end':
        if (expect === 'value-or-end' && char === ']') {
          stack.pop();
          i++;
          expect = afterValue();
        } else if (char === '{' || char === '[') {
          stack.push(char);
          i++;
          expect = char === '{' ? 'key-or-end' : 'value-or-end';
        } else if (char === '"') {
          const end = stringEnd(text, i);
          if (end < 0) return ~end;
          i = end;
          expect = afterValue();
        } else {
          const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, i));
          NUMBER.lastIndex = i;
          const number = literal === undefined ? NUMBER.exec(text) : null;
          if (literal === undefined && number === null) return i;
          i += literal?.length ?? number![0].length;
          expect = afterValue();
        }
        break;
    }
  }
}

/** The offset just past the string opening at `start`, or `~offset` of the character that breaks it. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') return i + 1;
    if (char < ' ') return ~i;
    if (char === '\\') {
      const next = text[i + 1];
      if (next !== undefined && ESCAPES.has(next)) i++;
      else if (next === 'u' && HEX4.test(text.slice(i + 2, i + 6))) i += 5;
      else return ~i;
    }
  }
  return ~text.length;
}
