import { canonicalJson, jsonIssues, sha256Hex } from './json';

describe(canonicalJson.name, () => {
  it('sorts keys by UTF-16 code units and serialises numbers the ECMAScript way (RFC 8785 vectors)', () => {
    // The RFC's own vector: the literal is meant to round to 333333333.3333333.
    // eslint-disable-next-line no-loss-of-precision
    expect(canonicalJson({ numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001], string: '€$\u000f\nA\'B"\\\\"/', literals: [null, true, false] })).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    expect(canonicalJson({ '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' })).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',

    );
  });

  it('gives the same text whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3] } })).toBe(canonicalJson({ a: { c: [3], d: 2 }, b: 1 }));
  });
});

describe(sha256Hex.name, () => {
  it('hashes UTF-8 text', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe(jsonIssues.name, () => {
  it('accepts plain JSON', () => {
    expect(jsonIssues({ a: [1, 'x', null, true, { b: 2.5 }] })).toEqual([]);
  });

  it('names every offending path', () => {
    expect(jsonIssues({ a: undefined, b: [Number.POSITIVE_INFINITY], c: new Map(), d: { e: Symbol('s') } }).map((i) => i.path)).toEqual(['a', 'b[0]', 'c', 'd.e']);
  });

  it('refuses nesting deeper than 64 levels', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(jsonIssues(deep)[0]!.message).toMatch(/deeper than 64/);
  });
});
