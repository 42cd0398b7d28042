import { decidePublishable, parseSnapshot } from './gap-rule';

const rows = (...positions: number[]) => positions.map((position) => ({ position }));
/** `xmin:xmax:xip` plus the id the reading statement took after the snapshot. */
const snap = (text: string, bound?: number) => {
  const xmax = Number(text.split(':')[1]);
  return parseSnapshot(text, BigInt(bound ?? xmax));
};

describe(decidePublishable.name, () => {
  it('publishes a contiguous run after the cursor', () => {
    const sut = decidePublishable(3, rows(4, 5, 6), snap('10:12:'), null);
    expect(sut).toEqual({ publish: rows(4, 5, 6), cursor: 6, pending: null, abandonedPositions: [] });
  });

  it('stops at a hole while a listed transaction that may hold it is in progress', () => {
    const sut = decidePublishable(3, rows(4, 6, 7), snap('10:15:11,13', 16), null);
    expect(sut.publish).toEqual(rows(4));
    expect(sut.cursor).toBe(4);
    expect(sut.pending).toEqual({ from: 5, listed: [11n, 13n], unlistedFrom: 15n, unlistedTo: 16n });
  });

  it('stops at a hole when the in-progress list is empty but ids were assigned past xmax', () => {
    // The holder took id 20 after the latest completed one (19): Postgres lists nothing.
    const sut = decidePublishable(85, rows(86, 88), snap('20:20:', 22), null);
    expect(sut.publish).toEqual(rows(86));
    expect(sut.pending).toEqual({ from: 87, listed: [], unlistedFrom: 20n, unlistedTo: 22n });
  });

  it('keeps waiting while an unlisted id from that range is still running', () => {
    const pending = { from: 87, listed: [], unlistedFrom: 20n, unlistedTo: 22n };
    expect(decidePublishable(86, rows(88), snap('20:23:20', 24), pending).publish).toEqual([]);
    expect(decidePublishable(86, rows(88), snap('19:21:19', 24), pending).publish).toEqual([]);
  });

  it('keeps waiting while any listed holder is still in progress', () => {
    const pending = { from: 5, listed: [11n, 13n], unlistedFrom: 15n, unlistedTo: 15n };
    const sut = decidePublishable(4, rows(6, 7), snap('13:16:13,15', 17), pending);
    expect(sut.publish).toEqual([]);
    expect(sut.pending).toBe(pending);
  });

  it('publishes the hole once its holder committed it', () => {
    const sut = decidePublishable(4, rows(5, 6, 7), snap('13:16:13', 17), { from: 5, listed: [11n, 13n], unlistedFrom: 15n, unlistedTo: 15n });
    expect(sut.publish).toEqual(rows(5, 6, 7));
    expect(sut.pending).toBeNull();
  });

  it('skips a hole for good once every possible holder ended without filling it (rollback)', () => {
    const pending = { from: 5, listed: [11n, 13n], unlistedFrom: 15n, unlistedTo: 17n };
    const sut = decidePublishable(4, rows(6, 7), snap('18:19:18', 20), pending);
    expect(sut.publish).toEqual(rows(6, 7));
    expect(sut.abandonedPositions).toEqual([5]);
    expect(sut.cursor).toBe(7);
  });

  it('skips a hole at once only when nothing at all could be running', () => {
    const sut = decidePublishable(0, rows(1, 4), snap('20:20:', 20), null);
    expect(sut.publish).toEqual(rows(1, 4));
    expect(sut.abandonedPositions).toEqual([2, 3]);
  });

  it('does not reuse holders recorded for a different hole', () => {
    const sut = decidePublishable(6, rows(8), snap('30:33:31', 34), { from: 5, listed: [11n], unlistedFrom: 12n, unlistedTo: 12n });
    expect(sut.publish).toEqual([]);
    expect(sut.pending).toEqual({ from: 7, listed: [31n], unlistedFrom: 33n, unlistedTo: 34n });
  });

  it('ignores rows at or below the cursor', () => {
    expect(decidePublishable(5, rows(5, 6), snap('1:1:'), null).publish).toEqual(rows(6));
  });

  it('rejects text that is not a snapshot', () => {
    expect(() => parseSnapshot('nonsense', 1n)).toThrow(/not a pg_snapshot/);
  });
});
