import { canonicalText, diffLines } from './diff';

describe(diffLines.name, () => {
  it('marks removed and added lines and keeps the common ones in order', () => {
    const sut = diffLines('a\nb\nc', 'a\nc\nd');
    expect(sut).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'same', text: 'c' },
      { kind: 'added', text: 'd' },
    ]);
  });

  it('reports no change when the texts are equal', () => {
    expect(diffLines('x\ny', 'x\ny').every((line) => line.kind === 'same')).toBe(true);
  });
});

describe(canonicalText.name, () => {
  it('sorts keys at every depth so reordering alone is no difference', () => {
    expect(canonicalText({ b: 1, a: { d: [{ z: 1, y: 2 }], c: 2 } })).toBe(canonicalText({ a: { c: 2, d: [{ y: 2, z: 1 }] }, b: 1 }));
  });
});
