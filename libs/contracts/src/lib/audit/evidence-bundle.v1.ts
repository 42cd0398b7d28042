import { z } from 'zod';
import { ACTOR_KINDS, Identifiers, type EventEnvelope } from '../envelope';
import { canonicalJson, sha256Hex, type JsonObject } from '../json';
import { EffectCompletedV1, EffectFailedV1, EffectPreparedV1, RunCheckpointV1 } from '../execution/run.events.v1';
import { runStreamId } from '../execution/run-vocabulary';
import { PolicyDecidedV1 } from '../policy/policy.events.v1';
import { EvidencePayloadSchema, type EvidencePayload } from './evidence-payloads';

export const EVIDENCE_BUNDLE_FORMAT = 'packetagent.evidence.v1';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** An event exactly as stored: the envelope with its digest and the digest it links to. */
export const EvidenceEventSchema = z.object({
  id: z.string().regex(Identifiers.uuid),
  type: z.string().regex(Identifiers.eventType),
  schemaVersion: z.number().int().positive(),
  stream: z.string().regex(Identifiers.stream),
  streamVersion: z.number().int().positive(),
  globalPosition: z.number().int().positive(),
  workspaceId: z.string().regex(Identifiers.workspace),
  occurredAt: z.string(),
  causationId: z.string().nullable(),
  correlationId: z.string().nullable(),
  traceparent: z.string().nullable(),
  actor: z.object({ kind: z.enum(ACTOR_KINDS), id: z.string().min(1) }),
  data: z.json(),
  digest: sha256,
  prevDigest: sha256.nullable(),
});

export const EVIDENCE_STREAM_ROLES = ['run', 'policy', 'attention'] as const;
export const EvidenceStreamRoleSchema = z.enum(EVIDENCE_STREAM_ROLES);
export type EvidenceStreamRole = z.infer<typeof EvidenceStreamRoleSchema>;

/** A whole stream, from version 1 to its head as of the export. */
export const EvidenceStreamSchema = z.object({
  stream: z.string().regex(Identifiers.stream),
  role: EvidenceStreamRoleSchema,
  events: z.array(EvidenceEventSchema),
});

const EventRefSchema = z.object({
  stream: z.string(),
  streamVersion: z.number().int().positive(),
  globalPosition: z.number().int().positive(),
});
export type EvidenceEventRef = z.infer<typeof EventRefSchema>;

export const EvidenceCheckpointSchema = EventRefSchema.extend({
  eventDigest: sha256,
  seq: z.number().int().positive(),
  phase: z.string(),
  stateDigest: sha256,
  previousDigest: sha256.nullable(),
  digest: sha256,
});
export type EvidenceCheckpoint = z.infer<typeof EvidenceCheckpointSchema>;

export const EFFECT_OUTCOMES = ['pending', 'completed', 'failed', 'unknown'] as const;

/** What an effect did, from its `effect.prepared` receipt to its outcome (`unknown`: cut off mid-call). */
export const EvidenceEffectSchema = z.object({
  effectId: z.string(),
  callId: z.string(),
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullable(),
  idempotencyKey: z.string(),
  requestDigest: sha256,
  attempts: z.number().int().positive(),
  prepared: EventRefSchema,
  outcome: z.enum(EFFECT_OUTCOMES),
  outcomeAt: EventRefSchema.nullable(),
});
export type EvidenceEffect = z.infer<typeof EvidenceEffectSchema>;

export const EvidenceDecisionSchema = EventRefSchema.extend({
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullable(),
  decision: z.string(),
  reason: z.string(),
  approvalId: z.string().nullable(),
});
export type EvidenceDecision = z.infer<typeof EvidenceDecisionSchema>;

/** Derived from the events; a verifier recomputes it, so an edited index is caught like an edited event. */
export const EvidenceIndexSchema = z.object({
  checkpoints: z.array(EvidenceCheckpointSchema),
  effects: z.array(EvidenceEffectSchema),
  decisions: z.array(EvidenceDecisionSchema),
});
export type EvidenceIndex = z.infer<typeof EvidenceIndexSchema>;

/**
 * Everything recorded about one run, verifiable without the server: every event's digest is
 * recomputable, every stream is a hash chain from version 1, the checkpoints form their own
 * chain, and `bundleDigest` is SHA-256 over the RFC 8785 canonical JSON of every other field.
 * `payloads` holds the content of every payload reference in the events, by digest (absent
 * when there is none).
 */
export const EvidenceBundleSchema = z.object({
  format: z.literal(EVIDENCE_BUNDLE_FORMAT),
  runId: z.string().min(1).max(200),
  workspaceId: z.string().regex(Identifiers.workspace),
  exportedAt: z.iso.datetime(),
  streams: z.array(EvidenceStreamSchema).min(1),
  index: EvidenceIndexSchema,
  payloads: z.array(EvidencePayloadSchema).optional(),
  bundleDigest: sha256,
});
export type EvidenceBundle = z.infer<typeof EvidenceBundleSchema>;
export type EvidenceStream = z.infer<typeof EvidenceStreamSchema>;

/** The chain link of a run checkpoint: SHA-256 of `<previous digest or empty>:<state digest>`. */
export function checkpointChainDigest(previousDigest: string | null, stateDigest: string): string {
  return sha256Hex(`${previousDigest ?? ''}:${stateDigest}`);
}

const refOf = (event: Pick<EventEnvelope, 'stream' | 'streamVersion' | 'globalPosition'>): EvidenceEventRef => ({
  stream: event.stream,
  streamVersion: event.streamVersion,
  globalPosition: event.globalPosition,
});

type IndexedEvent = Pick<EventEnvelope, 'type' | 'stream' | 'streamVersion' | 'globalPosition' | 'data' | 'digest'>;

/**
 * Checkpoints and effect receipts of the run stream and the decisions of its policy stream.
 * Events whose data does not parse are left out: the digest check reports them.
 */
export function evidenceIndex(streams: ReadonlyArray<{ role: EvidenceStreamRole; events: readonly IndexedEvent[] }>): EvidenceIndex {
  const checkpoints: EvidenceCheckpoint[] = [];
  const effects = new Map<string, EvidenceEffect>();
  const decisions: EvidenceDecision[] = [];
  for (const { role, events } of streams) {
    for (const event of events) {
      if (role === 'run' && event.type === 'run.checkpoint') {
        const data = RunCheckpointV1.safeParse(event.data);
        if (!data.success) continue;
        const { seq, phase, stateDigest, previousDigest, digest } = data.data;
        checkpoints.push({ ...refOf(event), eventDigest: event.digest, seq, phase, stateDigest, previousDigest, digest });
      } else if (role === 'run' && event.type === 'effect.prepared') {
        const data = EffectPreparedV1.safeParse(event.data);
        if (!data.success) continue;
        const known = effects.get(data.data.effectId);
        if (known) {
          known.attempts += 1;
          continue;
        }
        const { effectId, callId, tool, verb, resource, idempotencyKey, requestDigest } = data.data;
        effects.set(effectId, { effectId, callId, tool, verb, resource, idempotencyKey, requestDigest, attempts: 1, prepared: refOf(event), outcome: 'pending', outcomeAt: null });
      } else if (role === 'run' && (event.type === 'effect.completed' || event.type === 'effect.failed')) {
        const completed = event.type === 'effect.completed' ? EffectCompletedV1.safeParse(event.data) : null;
        const failed = event.type === 'effect.failed' ? EffectFailedV1.safeParse(event.data) : null;
        const effectId = completed?.data?.effectId ?? failed?.data?.effectId;
        const effect = effectId === undefined ? undefined : effects.get(effectId);
        if (!effect) continue;
        effect.outcome = completed?.success ? 'completed' : failed?.data?.outcomeKnown ? 'failed' : 'unknown';
        effect.outcomeAt = refOf(event);
      } else if (role === 'policy' && event.type === 'policy.decided') {
        const data = PolicyDecidedV1.safeParse(event.data);
        if (!data.success) continue;
        const { tool, verb, resource, decision, reason, approvalId } = data.data;
        decisions.push({ ...refOf(event), tool, verb, resource, decision, reason: reason.code, approvalId: approvalId ?? null });
      }
    }
  }
  return { checkpoints, effects: [...effects.values()], decisions };
}

/** SHA-256 over the canonical JSON of the bundle without its `bundleDigest` field. */
export function evidenceBundleDigest(bundle: JsonObject): string {
  const { bundleDigest: _ignored, ...content } = bundle;
  return sha256Hex(canonicalJson(content));
}

export interface EvidenceSource {
  runId: string;
  workspaceId: string;
  exportedAt: Date;
  run: readonly EventEnvelope[];
  policy: readonly EventEnvelope[];
  attention: ReadonlyArray<readonly EventEnvelope[]>;
  /** The content of the payloads the events reference; a reference without one is reported by the verifier. */
  payloads?: readonly EvidencePayload[];
}

/** Assembles and seals a bundle from whole streams read in one snapshot. */
export function buildEvidenceBundle(source: EvidenceSource): EvidenceBundle {
  const streamOf = (role: EvidenceStreamRole, events: readonly EventEnvelope[]): EvidenceStream => ({ stream: events[0]!.stream, role, events: [...events] });
  const attention = source.attention.filter((events) => events.length > 0).map((events) => streamOf('attention', events));
  attention.sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : 0));
  const streams = [
    { stream: runStreamId(source.runId), role: 'run' as const, events: [...source.run] },
    ...(source.policy.length ? [streamOf('policy', source.policy)] : []),
    ...attention,
  ];
  const content = {
    format: EVIDENCE_BUNDLE_FORMAT,
    runId: source.runId,
    workspaceId: source.workspaceId,
    exportedAt: source.exportedAt.toISOString(),
    streams,
    index: evidenceIndex(streams),
    ...(source.payloads?.length ? { payloads: [...source.payloads].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0)) } : {}),
  } satisfies Omit<EvidenceBundle, 'bundleDigest'>;
  return { ...content, bundleDigest: evidenceBundleDigest(content as unknown as JsonObject) };
}
