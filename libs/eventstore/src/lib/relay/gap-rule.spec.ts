import { decidePublishable, parseSnapshot } from './gap-rule';

const rows = (...positions: number[]) => positions.map((position) => ({ position }));
const snap = (text: string) => parseSnapshot(text);

describe(decidePublishable.name, () => {
  it('publishes a contiguous run after the cursor', () => {
    const sut = decidePublishable(3, rows(4, 5, 6), snap('10:12:'), null);
    expect(sut).toEqual({ publish: rows(4, 5, 6), cursor: 6, pending: null, abandonedPositions: [] });
  });

  it('stops at a hole while a transaction that may hold it is in progress', () => {
    const sut = decidePublishable(3, rows(4, 6, 7), snap('10:15:11,13'), null);
    expect(sut.publish).toEqual(rows(4));
    expect(sut.cursor).toBe(4);
    expect(sut.pending).toEqual({ from: 5, holders: [11n, 13n] });
  });

  it('keeps waiting while any holder seen with the hole is still in progress', () => {
    const pending = { from: 5, holders: [11n, 13n] };
    const sut = decidePublishable(4, rows(6, 7), snap('13:16:13,15'), pending);
    expect(sut.publish).toEqual([]);
    expect(sut.pending).toBe(pending);
  });

  it('publishes the hole once its holder committed it', () => {
    const sut = decidePublishable(4, rows(5, 6, 7), snap('13:16:13'), { from: 5, holders: [11n, 13n] });
    expect(sut.publish).toEqual(rows(5, 6, 7));
    expect(sut.pending).toBeNull();
  });

  it('skips a hole for good once every holder ended without filling it (rollback)', () => {
    const sut = decidePublishable(4, rows(6, 7), snap('14:16:15'), { from: 5, holders: [11n, 13n] });
    expect(sut.publish).toEqual(rows(6, 7));
    expect(sut.abandonedPositions).toEqual([5]);
    expect(sut.cursor).toBe(7);
  });

  it('skips a hole at once when nothing was in progress at the snapshot', () => {
    const sut = decidePublishable(0, rows(1, 4), snap('20:20:'), null);
    expect(sut.publish).toEqual(rows(1, 4));
    expect(sut.abandonedPositions).toEqual([2, 3]);
  });

  it('does not reuse holders recorded for a different hole', () => {
    const sut = decidePublishable(6, rows(8), snap('30:33:31'), { from: 5, holders: [11n] });
    expect(sut.publish).toEqual([]);
    expect(sut.pending).toEqual({ from: 7, holders: [31n] });
  });

  it('ignores rows at or below the cursor', () => {
    expect(decidePublishable(5, rows(5, 6), snap('1:1:'), null).publish).toEqual(rows(6));
  });

  it('rejects text that is not a snapshot', () => {
    expect(() => parseSnapshot('nonsense')).toThrow(/not a pg_snapshot/);
  });
});
