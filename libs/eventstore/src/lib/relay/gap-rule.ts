/**
 * Which committed events the relay may publish now without ever skipping one that commits
 * later. Positions come from a sequence, so transactions can commit out of position order: a
 * hole before a visible event is either held by a transaction still in progress (publish
 * nothing past it yet) or was rolled back (skip it for good). Pure, so every case is unit tested.
 *
 * Why it is sound (docs/adr/0002-relay-high-water-mark.md): an appending transaction takes its
 * transaction id before it allocates positions, and positions are allocated in increasing
 * order. If position q is visible in snapshot S and position p < q is not, p's holder got its
 * id before q was allocated, hence before q's transaction committed, hence before S was taken.
 * So the holder was running at S with an id below `bound`, an id the reading statement itself
 * took after S. Running transactions at S are those in S's in-progress list *and* any with an
 * id at or above S's xmax: Postgres does not list those (xmax is one past the latest
 * *completed* id, not the next id to assign). Once every id in that set has ended, a hole that
 * is still empty can never fill.
 */
export interface PgSnapshot {
  xmin: bigint;
  /** One past the latest completed transaction id; running ids at or above it are not in xip. */
  xmax: bigint;
  xip: bigint[];
  /** A transaction id taken after the snapshot: every id assigned before it is smaller. */
  bound: bigint;
}

export interface PendingGap {
  /** First missing position. */
  from: number;
  /** Ids that were running when the hole was first seen: listed ones, plus the range [unlistedFrom, unlistedTo). */
  listed: bigint[];
  unlistedFrom: bigint;
  unlistedTo: bigint;
}

export interface GapDecision<T> {
  publish: T[];
  /** Highest position settled (published, or a hole proven empty). */
  cursor: number;
  pending: PendingGap | null;
  abandonedPositions: number[];
}

/** Parses `pg_current_snapshot()::text` (e.g. `100:104:100,102`) with the statement's own later id. */
export function parseSnapshot(text: string, bound: string | bigint): PgSnapshot {
  const match = /^(\d+):(\d+):([\d,]*)$/.exec(text.trim());
  if (!match) throw new Error(`not a pg_snapshot: ${text}`);
  return {
    xmin: BigInt(match[1]!),
    xmax: BigInt(match[2]!),
    xip: match[3] ? match[3].split(',').map((x) => BigInt(x)) : [],
    bound: BigInt(bound),
  };
}

function possibleHolders(from: number, snapshot: PgSnapshot): PendingGap {
  return { from, listed: [...snapshot.xip], unlistedFrom: snapshot.xmax, unlistedTo: snapshot.bound };
}

function noneRunning(gap: PendingGap): boolean {
  return gap.listed.length === 0 && gap.unlistedFrom >= gap.unlistedTo;
}

/** Whether every id that might hold the hole has ended, as seen by a later snapshot. */
function allEnded(gap: PendingGap, later: PgSnapshot): boolean {
  const ended = (xid: bigint) => xid < later.xmax && !later.xip.includes(xid);
  return (
    gap.listed.every(ended) &&
    later.xmax >= gap.unlistedTo &&
    !later.xip.some((xid) => xid >= gap.unlistedFrom && xid < gap.unlistedTo)
  );
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
      const seenBefore = pending !== null && pending.from === next ? pending : null;
      const holeIsFinal = seenBefore ? allEnded(seenBefore, snapshot) : noneRunning(possibleHolders(next, snapshot));
      if (!holeIsFinal) {
        return { publish, cursor: next - 1, pending: seenBefore ?? possibleHolders(next, snapshot), abandonedPositions };
      }
      for (let position = next; position < row.position; position++) abandonedPositions.push(position);
    }
    publish.push(row);
    next = row.position + 1;
  }
  return { publish, cursor: next - 1, pending: null, abandonedPositions };
}
