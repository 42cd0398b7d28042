import { computeEventDigest, type DigestInput, type EventEnvelope } from './envelope';
import { DomainError } from './errors';

/**
 * The rules of a stream's hash chain, written once for the audit verification, the offline
 * evidence bundle verifier and the supervisor's replay: each event's digest must be the digest
 * of its content, its `prevDigest` must be the digest of the event before it, and its version
 * must follow that event's without a gap.
 */

export const CHAIN_BREAK_REASONS = ['digest_mismatch', 'prev_digest_mismatch', 'version_gap'] as const;
export type ChainBreakReason = (typeof CHAIN_BREAK_REASONS)[number];

export interface ChainFinding {
  reason: ChainBreakReason;
  detail: string;
}

/** One place where a stream's chain does not hold. */
export interface ChainBreak extends ChainFinding {
  stream: string;
  streamVersion: number;
  globalPosition: number;
}

export interface ChainReport {
  ok: boolean;
  streamsChecked: number;
  eventsChecked: number;
  breaks: ChainBreak[];
}

/**
 * The event a stream's next event must follow. At the stream's start it is version 0 with a
 * null digest; `digest` is absent when the reader does not know it (a read from the middle of a
 * stream), and the next event's link is then not checked.
 */
export interface ChainLink {
  streamVersion: number;
  digest?: string | null;
}

export const STREAM_START: ChainLink = Object.freeze({ streamVersion: 0, digest: null });

export type ChainedEvent = DigestInput & Pick<EventEnvelope, 'digest'>;

/** What is wrong with `event` as the successor of `previous`, in a fixed order: version, link, digest. */
export function linkFindings(previous: ChainLink, event: ChainedEvent): ChainFinding[] {
  const findings: ChainFinding[] = [];
  const expectedVersion = previous.streamVersion + 1;
  if (event.streamVersion !== expectedVersion) findings.push({ reason: 'version_gap', detail: `expected version ${expectedVersion}` });
  if (previous.digest !== undefined && event.prevDigest !== previous.digest) {
    findings.push({ reason: 'prev_digest_mismatch', detail: `links to ${event.prevDigest ?? 'nothing'}, previous is ${previous.digest ?? 'nothing'}` });
  }
  if (computeEventDigest(event) !== event.digest) findings.push({ reason: 'digest_mismatch', detail: 'content does not match its digest' });
  return findings;
}

/** The link the event after `event` must follow: its stored digest, so one edit is reported once, where it was made. */
export function linkOf(event: Pick<EventEnvelope, 'streamVersion' | 'digest'>): ChainLink {
  return { streamVersion: event.streamVersion, digest: event.digest };
}

/**
 * Walks events ordered by stream and version, one at a time, so a reader can feed it page by
 * page. A change of stream starts a new chain at version 1; `after` is where the first stream's
 * chain is taken up when the events do not start it.
 */
export class ChainVerifier {
  private stream: string | null = null;
  private previous: ChainLink;
  private readonly breaks: ChainBreak[] = [];
  private streams = 0;
  private events = 0;

  constructor(after: ChainLink = STREAM_START) {
    this.previous = after;
  }

  /** The breaks this event adds (also kept for `report`). */
  check(event: EventEnvelope): ChainBreak[] {
    if (event.stream !== this.stream) {
      if (this.stream !== null) this.previous = STREAM_START;
      this.stream = event.stream;
      this.streams++;
    }
    const at = { stream: event.stream, streamVersion: event.streamVersion, globalPosition: event.globalPosition };
    const found = linkFindings(this.previous, event).map((finding) => ({ ...at, ...finding }));
    this.breaks.push(...found);
    this.previous = linkOf(event);
    this.events++;
    return found;
  }

  report(): ChainReport {
    return { ok: this.breaks.length === 0, streamsChecked: this.streams, eventsChecked: this.events, breaks: [...this.breaks] };
  }
}

/** Checks events ordered by stream and version; see `ChainVerifier`. */
export function verifyChain(events: Iterable<EventEnvelope>, after?: ChainLink): ChainReport {
  const verifier = new ChainVerifier(after);
  for (const event of events) verifier.check(event);
  return verifier.report();
}

/** A stream whose chain does not hold: its events are not to be trusted, or replayed. */
export class ChainBrokenError extends DomainError {
  readonly code = 'chain_broken';

  constructor(readonly chainBreak: ChainBreak) {
    super(`event at version ${chainBreak.streamVersion} of ${chainBreak.stream}: ${chainBreak.detail} (${chainBreak.reason})`);
  }
}

/** `verifyChain` for a reader that must stop at the first break: throws `ChainBrokenError`. */
export function assertChain(events: Iterable<EventEnvelope>, after?: ChainLink): void {
  const verifier = new ChainVerifier(after);
  for (const event of events) {
    const [first] = verifier.check(event);
    if (first) throw new ChainBrokenError(first);
  }
}
