import { z } from 'zod';
import { linkFindings, linkOf, STREAM_START, type ChainLink } from '../event-chain';
import { runStreamId } from '../execution/run-vocabulary';
import { canonicalJson, isJsonObject, type JsonObject, type JsonValue } from '../json';
import {
  checkpointChainDigest,
  EvidenceBundleSchema,
  evidenceBundleDigest,
  evidenceIndex,
  type EvidenceBundle,
  type EvidenceEventRef,
  type EvidenceIndex,
  type EvidenceStream,
} from './evidence-bundle.v1';
import { checkEvidencePayloads } from './evidence-payloads';

export const EVIDENCE_BREAK_REASONS = [
  'malformed',
  'wrong_stream',
  'wrong_workspace',
  'foreign_event',
  'version_gap',
  'prev_digest_mismatch',
  'digest_mismatch',
  'position_order',
  'checkpoint_chain',
  'index_mismatch',
  'bundle_digest_mismatch',
  'payload_missing',
  'payload_mismatch',
] as const;

export const EvidenceBreakSchema = z.object({
  /** Null when the break is not about one stream (the bundle digest, a malformed document). */
  stream: z.string().nullable(),
  streamVersion: z.number().int().nullable(),
  globalPosition: z.number().int().nullable(),
  reason: z.enum(EVIDENCE_BREAK_REASONS),
  detail: z.string(),
});
export type EvidenceBreak = z.infer<typeof EvidenceBreakSchema>;

export interface EvidenceVerification {
  ok: boolean;
  runId: string | null;
  workspaceId: string | null;
  bundleDigest: string | null;
  streamsChecked: number;
  eventsChecked: number;
  checkpointsChecked: number;
  /** Payload references checked against the content the bundle holds: one per event field that holds one. */
  payloadsChecked: number;
  breaks: EvidenceBreak[];
}

type Where = { stream: string | null; streamVersion?: number; globalPosition?: number };
type Sink = (where: Where, reason: EvidenceBreak['reason'], detail: string) => void;

/**
 * Checks an evidence bundle with nothing but its own content: every event digest is
 * recomputed, every stream must be an unbroken chain from version 1 in this run's workspace,
 * the run's checkpoints must chain, the index must be what the events say, every payload
 * reference must have its content in the bundle hashing to its digest, and the bundle digest
 * must cover the whole document. Never throws on bad input; every finding is a break.
 */
export function verifyEvidenceBundle(value: unknown): EvidenceVerification {
  const breaks: EvidenceBreak[] = [];
  const report: Sink = (where, reason, detail) =>
    breaks.push({ stream: where.stream, streamVersion: where.streamVersion ?? null, globalPosition: where.globalPosition ?? null, reason, detail });
  const parsed = EvidenceBundleSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues.slice(0, 20)) {
      report({ stream: streamAt(value, issue.path) }, 'malformed', `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
    }
    return { ok: false, runId: null, workspaceId: null, bundleDigest: null, streamsChecked: 0, eventsChecked: 0, checkpointsChecked: 0, payloadsChecked: 0, breaks };
  }
  const bundle = parsed.data;
  let events = 0;
  checkStreamSet(bundle, report);
  for (const stream of bundle.streams) {
    events += stream.events.length;
    checkChain(bundle, stream, report);
  }
  const checkpointsChecked = checkCheckpoints(bundle, report);
  const payloadsChecked = checkEvidencePayloads(bundle.streams, bundle.payloads ?? [], report);
  checkIndex(bundle.index, evidenceIndex(bundle.streams), report);
  // Over the document as given: a field the schema does not know is covered too.
  const recomputed = evidenceBundleDigest(value as JsonObject);
  if (recomputed !== bundle.bundleDigest) {
    report({ stream: null }, 'bundle_digest_mismatch', `the content digests to ${recomputed}, the bundle says ${bundle.bundleDigest}`);
  }
  return {
    ok: breaks.length === 0,
    runId: bundle.runId,
    workspaceId: bundle.workspaceId,
    bundleDigest: bundle.bundleDigest,
    streamsChecked: bundle.streams.length,
    eventsChecked: events,
    checkpointsChecked,
    payloadsChecked,
    breaks,
  };
}

/** The stream a schema issue is about, when its path points into one. */
function streamAt(value: unknown, path: readonly PropertyKey[]): string | null {
  if (path[0] !== 'streams' || typeof path[1] !== 'number' || !isJsonObject(value as JsonValue)) return null;
  const streams = (value as { streams?: unknown }).streams;
  const stream = Array.isArray(streams) ? (streams[path[1]] as { stream?: unknown } | undefined)?.stream : undefined;
  return typeof stream === 'string' ? stream : null;
}

function checkStreamSet(bundle: EvidenceBundle, report: Sink): void {
  const seen = new Set<string>();
  const runs = bundle.streams.filter((stream) => stream.role === 'run');
  if (runs.length !== 1) report({ stream: null }, 'malformed', `a bundle holds exactly one run stream, this one ${runs.length}`);
  for (const { stream, role } of bundle.streams) {
    if (seen.has(stream)) report({ stream }, 'malformed', 'the stream appears twice');
    seen.add(stream);
    const expected = role === 'run' ? runStreamId(bundle.runId) : role === 'policy' ? `policy-${bundle.runId}` : null;
    if (expected !== null && stream !== expected) report({ stream }, 'wrong_stream', `the ${role} stream of run ${bundle.runId} is ${expected}`);
    if (role === 'attention' && !stream.startsWith('attention-')) report({ stream }, 'wrong_stream', 'an attention stream is named attention-<id>');
  }
}

function checkChain(bundle: EvidenceBundle, stream: EvidenceStream, report: Sink): void {
  let previous: ChainLink = STREAM_START;
  let position: number | null = null;
  for (const event of stream.events) {
    const at = { stream: stream.stream, streamVersion: event.streamVersion, globalPosition: event.globalPosition };
    if (event.stream !== stream.stream) report(at, 'wrong_stream', `the event belongs to ${event.stream}`);
    if (event.workspaceId !== bundle.workspaceId) report(at, 'wrong_workspace', `the event belongs to workspace ${event.workspaceId}`);
    for (const finding of linkFindings(previous, event)) report(at, finding.reason, finding.detail);
    if (position !== null && event.globalPosition <= position) report(at, 'position_order', `position ${event.globalPosition} follows ${position}`);
    if (!belongsToRun(bundle.runId, stream.role, event)) report(at, 'foreign_event', `the event is not about run ${bundle.runId}`);
    previous = linkOf(event);
    position = event.globalPosition;
  }
}

/** Policy decisions and attention requests name their run; the other events are bound by their stream. */
function belongsToRun(runId: string, role: EvidenceStream['role'], event: EvidenceStream['events'][number]): boolean {
  const names = event.type === 'policy.decided' || event.type === 'attention.requested';
  if (role === 'run' || !names) return true;
  return isJsonObject(event.data) && event.data['runId'] === runId;
}

function checkCheckpoints(bundle: EvidenceBundle, report: Sink): number {
  const run = bundle.streams.find((stream) => stream.role === 'run');
  let previous: { seq: number; digest: string } | null = null;
  let count = 0;
  for (const checkpoint of evidenceIndex(run ? [run] : []).checkpoints) {
    count++;
    const expectedSeq = (previous?.seq ?? 0) + 1;
    const problems = [
      checkpoint.seq !== expectedSeq ? `is number ${checkpoint.seq}, expected ${expectedSeq}` : null,
      checkpoint.previousDigest !== (previous?.digest ?? null) ? `links to ${checkpoint.previousDigest ?? 'nothing'}, previous is ${previous?.digest ?? 'nothing'}` : null,
      checkpoint.digest !== checkpointChainDigest(checkpoint.previousDigest, checkpoint.stateDigest) ? 'its digest is not the link of its previous and state digests' : null,
    ].filter((problem): problem is string => problem !== null);
    if (problems.length) report(checkpoint, 'checkpoint_chain', `checkpoint ${checkpoint.seq} ${problems.join('; ')}`);
    previous = { seq: checkpoint.seq, digest: checkpoint.digest };
  }
  return count;
}

function checkIndex(stated: EvidenceIndex, derived: EvidenceIndex, report: Sink): void {
  for (const section of ['checkpoints', 'effects', 'decisions'] as const) {
    const given = stated[section] as unknown as JsonObject[];
    const expected = derived[section] as unknown as JsonObject[];
    const length = Math.max(given.length, expected.length);
    for (let i = 0; i < length; i++) {
      const a = given[i];
      const b = expected[i];
      if (a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b)) continue;
      const entry = (b ?? a) as Partial<EvidenceEventRef> & { prepared?: EvidenceEventRef };
      const ref = entry.stream !== undefined ? entry : entry.prepared;
      const what = b === undefined ? 'is not backed by any event' : a === undefined ? 'is missing' : 'does not match the events';
      report({ stream: ref?.stream ?? null, streamVersion: ref?.streamVersion, globalPosition: ref?.globalPosition }, 'index_mismatch', `index.${section}[${i}] ${what}`);
    }
  }
}
