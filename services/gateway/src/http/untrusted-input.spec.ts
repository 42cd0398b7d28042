import { inspectJson, MAX_NESTING_DEPTH, yamlNestingDepth } from './untrusted-input';

describe(yamlNestingDepth.name, () => {
  it('counts block indentation, compact entries and flow brackets outside quotes and comments', () => {
    expect(yamlNestingDepth('name: a\ntools:\n  - name: x\n    verbs: [get, post]\n')).toBe(4);
    expect(yamlNestingDepth('- '.repeat(3_000) + 'x')).toBeGreaterThan(MAX_NESTING_DEPTH);
    expect(yamlNestingDepth('['.repeat(100_000))).toBeGreaterThan(MAX_NESTING_DEPTH);
    expect(yamlNestingDepth(`a: "${'['.repeat(200)}" # ${'{'.repeat(200)}\nb: don't [x]`)).toBeLessThan(5);
  });
});

describe(inspectJson.name, () => {
  it('stops at the depth limit without recursing, and lists invalid strings in document order', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(inspectJson(deep, 'body').tooDeep).toBe(true);
    expect(inspectJson({ a: 'ok', b: ['\u0000'], c: '\udc00' }, 'body')).toEqual({
      tooDeep: false,
      issues: [
        { path: 'b.0', message: expect.any(String) },
        { path: 'c', message: expect.any(String) },
      ],
    });
    expect(inspectJson({ emoji: '\u{1F600}' }, 'body').issues).toEqual([]);
    expect(inspectJson('a\u0000b', 'body').issues).toEqual([{ path: 'body', message: expect.any(String) }]);
  });
});
