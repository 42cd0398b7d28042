import { findDuplicateJsonKey, jsonSyntaxErrorOffset } from '../worker-definition/json-source';
import { PackageInvalidError, PackageTooLargeError } from './errors';
import { MAX_PACKAGE_BYTES, decodeJsonDocument, invalidUtf8Offset, parseJsonDocument } from './json-document';
import { refusal } from './packetade.testkit';

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe(decodeJsonDocument.name, () => {
  it('returns the text of UTF-8 bytes, without a leading byte order mark', () => {
    expect(decodeJsonDocument(Buffer.from('\uFEFF{"name":"café ✓ 𝄞"}', 'utf8'))).toBe('{"name":"café ✓ 𝄞"}');
    expect(decodeJsonDocument('{"a":1}')).toBe('{"a":1}');
  });

  it('accepts a document of exactly MAX_PACKAGE_BYTES', () => {
    const text = `"${'a'.repeat(MAX_PACKAGE_BYTES - 2)}"`;
    expect(decodeJsonDocument(text)).toHaveLength(MAX_PACKAGE_BYTES);
  });

  it('refuses a document one byte over MAX_PACKAGE_BYTES, counting bytes and not characters', () => {
    // 'é' is two bytes in UTF-8: half as many characters as the limit, one byte too many.
    const text = `"${'é'.repeat(MAX_PACKAGE_BYTES / 2 - 1)}"x`;
    const sut = refusal(() => decodeJsonDocument(text));
    expect(sut).toBeInstanceOf(PackageTooLargeError);
    expect(sut.code).toBe('package_too_large');
    expect(sut.issues).toEqual([{ path: '(json)', message: `the document is ${MAX_PACKAGE_BYTES + 1} bytes; the limit is 1048576 bytes (1 MiB)` }]);
  });

  it.each([
    ['a stray continuation byte', [0x7b, 0x80, 0x7d], 1],
    ['an overlong encoding of "/"', [0x22, 0xc0, 0xaf, 0x22], 1],
    ['an overlong three-byte form', [0x22, 0x61, 0xe0, 0x80, 0xaf, 0x22], 2],
    ['an encoded UTF-16 surrogate', [0x22, 0xed, 0xa0, 0x80, 0x22], 1],
    ['a code point beyond U+10FFFF', [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], 1],
    ['a sequence cut short by the end', [0x22, 0x61, 0xe2, 0x82], 2],
    ['a lead byte that never starts a sequence', [0x22, 0xff, 0x22], 1],
  ])('refuses %s, naming the byte offset of the sequence', (_case, bytes, offset) => {
    const sut = refusal(() => decodeJsonDocument(Buffer.from(bytes)));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues).toEqual([{ path: '(json)', message: `not valid UTF-8: the sequence at byte ${offset} is malformed` }]);
  });
});

describe(invalidUtf8Offset.name, () => {
  it('agrees with a fatal TextDecoder on random byte strings', () => {
    const next = random(20260302);
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let invalid = 0;
    for (let round = 0; round < 2000; round++) {
      // Bias towards the bytes that start and continue multi-byte sequences.
      const bytes = Uint8Array.from({ length: 1 + Math.floor(next() * 12) }, () => (next() < 0.5 ? 0x80 + Math.floor(next() * 0x80) : Math.floor(next() * 0x100)));
      let valid = true;
      try {
        decoder.decode(bytes);
      } catch {
        valid = false;
        invalid++;
      }
      expect({ bytes: [...bytes], valid: invalidUtf8Offset(bytes) === -1 }).toEqual({ bytes: [...bytes], valid });
    }
    // Both kinds of input were exercised.
    expect(invalid).toBeGreaterThan(100);
    expect(invalid).toBeLessThan(2000);
  });
});

describe(parseJsonDocument.name, () => {
  it('parses a document', () => {
    expect(parseJsonDocument('{"a":[1,{"b":null}],"c":"d"}')).toEqual({ a: [1, { b: null }], c: 'd' });
  });

  it.each([
    ['a missing value', '{\n  "a": }', '(json) 2:8'],
    ['a trailing comma', '[1,\n 2,\n]', '(json) 3:1'],
    ['an unterminated object', '{"a":1', '(json) 1:7'],
    ['an empty document', '', '(json) 1:1'],
    ['text after the value', '{"a":1} x', '(json) 1:9'],
    ['a single-quoted string', "{'a':1}", '(json) 1:2'],
  ])('refuses %s at its line and column, without quoting the source', (_case, text, path) => {
    const sut = refusal(() => parseJsonDocument(text));
    expect(sut).toBeInstanceOf(PackageInvalidError);
    expect(sut.issues).toEqual([{ path, message: 'not valid JSON' }]);
  });

  it('refuses a duplicate key at any depth, at the duplicate', () => {
    const text = '{\n  "worker": {\n    "tools": [{ "tool": "files", "tool": "git" }]\n  }\n}';
    const sut = refusal(() => parseJsonDocument(text));
    expect(sut.issues).toEqual([{ path: '(json) 3:34', message: 'duplicate key "tool": object keys must be unique' }]);
  });

  it('tells keys from values and sibling objects apart', () => {
    expect(parseJsonDocument('{"a":"a","b":{"a":"b"},"c":[{"a":1},{"a":2}],"d":"\\"a\\":"}')).toEqual({ a: 'a', b: { a: 'b' }, c: [{ a: 1 }, { a: 2 }], d: '"a":' });
  });

  it('refuses a duplicate key spelled with an escape', () => {
    expect(refusal(() => parseJsonDocument('{"name":1,"n\\u0061me":2}')).issues).toEqual([{ path: '(json) 1:11', message: 'duplicate key "name": object keys must be unique' }]);
  });

  it('refuses a NUL character and a lone surrogate, at their paths', () => {
    const sut = refusal(() => parseJsonDocument('{"worker":{"instructions":"a\\u0000b"},"x":["\\ud800"]}'));
    expect(sut.issues).toEqual([
      { path: 'worker.instructions', message: 'string contains a NUL character' },
      { path: 'x[0]', message: 'string contains a lone UTF-16 surrogate' },
    ]);
  });

  it('refuses nesting deeper than 64 levels, and prefixes the paths of a payload', () => {
    const text = `${'['.repeat(100)}${']'.repeat(100)}`;
    const sut = refusal(() => parseJsonDocument(text, 'payload '));
    expect(sut.issues).toEqual([{ path: `payload${'[0]'.repeat(65)}`, message: 'nested deeper than 64 levels' }]);
  });
});

describe(jsonSyntaxErrorOffset.name, () => {
  it('finds no error in valid JSON of every kind', () => {
    for (const text of ['0', '-1.5e+3', 'true', ' null ', '"\\u00e9\\n"', '[]', '{}', '[[],{}]', '{"a":{"b":[1,"x",false]}}']) {
      expect([text, jsonSyntaxErrorOffset(text)]).toEqual([text, -1]);
    }
  });

  it.each([
    ['01', 1],
    ['[1 2]', 3],
    ['{"a" 1}', 5],
    ['{"a":1,}', 7],
    ['"tab\there"', 4],
    ['"\\x"', 1],
    ['"abc', 4],
    ['nul', 0],
    ['[', 1],
  ])('locates the error in %j at %d', (text, offset) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(jsonSyntaxErrorOffset(text)).toBe(offset);
  });
});

describe(findDuplicateJsonKey.name, () => {
  it('names the first duplicate and its offset, or null', () => {
    expect(findDuplicateJsonKey('{"a":1,"b":{"c":1,"c":2}}')).toEqual({ offset: 18, key: 'c' });
    expect(findDuplicateJsonKey('[{"a":1},{"a":1}]')).toBeNull();
  });
});
