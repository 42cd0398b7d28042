/**
 * Which committed events the relay may publish now without ever skipping one that commits
 * later. Positions come from a sequence, so transactions can commit out of position order: a
 * hole before a visible event is either held by a transaction still in progress (publish
 * nothing past it yet) or was rolled back (skip it for good). Pure, so every case is unit tested.
 *
 * Why it is sound (docs/adr/0002-relay-high-water-mark.md): an appending transaction takes its
 * transaction id before it allocates positions, and positions are allocated in increasing
 * order. If position q is visible in snapshot S and position p < q is not, p's holder got its
 * id before q was allocated, hence before q's transaction committed, hence before S was taken:
 * it is in S's in-progress list, or it aborted. Once every transaction in that list has ended,
 * a hole that is still empty can never fill.
 */
export interface PgSnapshot {
  xmin: bigint;
  xmax: bigint;
  xip: bigint[];
}

export interface PendingGap {
  /** First missing position. */
  from: number;
  /** Transactions in progress when the hole was first seen; one of them may hold it. */
  holders: bigint[];
}

export interface GapDecision<T> {
  publish: T[];
  /** Highest position settled (published, or a hole proven empty). */
  cursor: number;
  pending: PendingGap | null;
  abandonedPositions: number[];
}

/** Parses `pg_current_snapshot()::text`, e.g. `100:104:100,102`. */
export function parseSnapshot(text: string): PgSnapshot {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text.trim());
  if (!match) throw new Error(`not a pg_snapshot: ${text}`);
  return {
    xmin: BigInt(match[1]!),
    xmax: BigInt(match[2]!),
    xip: match[3] ? match[3].split(',').map((x) => BigInt(x)) : [],
  };
}

function allEnded(holders: bigint[], snapshot: PgSnapshot): boolean {
  return holders.every((xid) => xid < snapshot.xmax && !snapshot.xip.includes(xid));
}

export function decidePublishable<T extends { position: number }>(
  cursor: number,
  rows: readonly T[],
  snapshot: PgSnapshot,
  pending: PendingGap | null,
): GapDecision<T> {
  const publish: T[] = [];
  const abandonedPositions: number[] = [];
  let next = cursor + 1;
  for (const row of rows) {
    if (row.position < next) continue;
    if (row.position > next) {
      const holeIsFinal =
        snapshot.xip.length === 0 || (pending !== null && pending.from === next && allEnded(pending.holders, snapshot));
      if (!holeIsFinal) {
        const stillWaiting = pending !== null && pending.from === next ? pending : { from: next, holders: [...snapshot.xip] };
        return { publish, cursor: next - 1, pending: stillWaiting, abandonedPositions };
      }
      for (let position = next; position < row.position; position++) abandonedPositions.push(position);
    }
    publish.push(row);
    next = row.position + 1;
  }
  return { publish, cursor: next - 1, pending: null, abandonedPositions };
}
