import { computeEventDigest, newEventId, type EventEnvelope } from '../envelope';
import { runStreamId } from '../execution/run-vocabulary';
import { sha256Hex, type JsonObject, type JsonValue } from '../json';
import { buildEvidenceBundle, checkpointChainDigest, evidenceBundleDigest, type EvidenceBundle } from './evidence-bundle.v1';
import { verifyEvidenceBundle } from './verify-evidence-bundle';

const WS = 'ws_audit';
const RUN = '0193a000-0000-7000-8000-000000000001';
let position = 100;

/** A stream as the store writes it: versions from 1, each digest linked to the one before. */
function chain(stream: string, events: Array<{ type: string; data: JsonValue }>): EventEnvelope[] {
  let prevDigest: string | null = null;
  return events.map(({ type, data }, index) => {
    const body = {
      id: newEventId(), type, schemaVersion: 1, stream, streamVersion: index + 1, workspaceId: WS,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(), causationId: null, correlationId: null, traceparent: null,
      actor: { kind: 'service' as const, id: 'supervisor' }, data, prevDigest,
    };
    const digest = computeEventDigest(body);
    prevDigest = digest;
    position += 3;
    return { ...body, globalPosition: position, digest };
  });
}

const hex = (seed: string) => sha256Hex(seed);

function checkpoint(seq: number, previousDigest: string | null): { type: string; data: JsonValue } {
  const stateDigest = hex(`state-${seq}`);
  return {
    type: 'run.checkpoint',
    data: {
      seq, phase: 'act', iteration: seq, toolCalls: seq, costUsd: 0.01 * seq,
      remaining: { iterations: 10 - seq, toolCalls: 10 - seq, costUsd: null, wallSeconds: 100 },
      stateDigest, previousDigest, digest: checkpointChainDigest(previousDigest, stateDigest),
    },
  };
}

function sampleBundle(): EvidenceBundle {
  const first = checkpoint(1, null);
  const second = checkpoint(2, (first.data as { digest: string }).digest);
  const run = chain(runStreamId(RUN), [
    { type: 'run.admitted', data: { deploymentId: 'dep-1' } },
    first,
    { type: 'effect.prepared', data: { effectId: 'eff-1', callId: 'call-1', tool: 'http_fetch', verb: 'GET', resource: 'https://ci.example.com/x', idempotencyKey: 'k1', requestDigest: hex('req'), idempotentByKey: false, attempt: 1 } },
    { type: 'effect.completed', data: { effectId: 'eff-1', callId: 'call-1', summary: '200 OK' } },
    { type: 'run.waiting', data: { reason: 'approval', attentionId: 'att-1', callId: 'call-2' } },
    second,
    { type: 'run.succeeded', data: { summary: 'done', output: { ok: true } } },
  ]);
  const policy = chain(`policy-${RUN}`, [
    { type: 'policy.decided', data: { runId: RUN, tool: 'http_fetch', verb: 'GET', resource: 'https://ci.example.com/x', callDigest: hex('c1'), decision: 'allow', reason: { code: 'granted', text: 'granted' } } },
    { type: 'policy.decided', data: { runId: RUN, tool: 'slack_post', verb: 'POST', resource: null, callDigest: hex('c2'), decision: 'approval_required', reason: { code: 'approval_required', text: 'asks' }, approvalId: 'att-1' } },
  ]);
  const attention = chain('attention-att-1', [
    {
      type: 'attention.requested',
      data: { attentionId: 'att-1', runId: RUN, deploymentId: 'dep-1', versionDigest: hex('v'), tool: 'slack_post', verb: 'POST', resource: null, arguments: {}, requester: { kind: 'service', id: 'supervisor' }, deadline: '2026-01-01T01:00:00.000Z' },
    },
    { type: 'attention.approved', data: { scope: 'once', actor: { kind: 'user', id: 'u1' } } },
  ]);
  return buildEvidenceBundle({ runId: RUN, workspaceId: WS, exportedAt: new Date('2026-01-02T00:00:00.000Z'), run, policy, attention: [attention] });
}

/** Edits a bundle's JSON the way someone with the file could. */
function tampered(edit: (bundle: EvidenceBundle) => void, reseal = false): unknown {
  const copy = JSON.parse(JSON.stringify(sampleBundle())) as EvidenceBundle;
  edit(copy);
  if (reseal) copy.bundleDigest = evidenceBundleDigest(copy as unknown as JsonObject);
  return copy;
}

/** Re-signs an event after an edit, so only deeper checks can catch it. */
function redigest(event: EventEnvelope): void {
  event.digest = computeEventDigest(event);
}

describe(verifyEvidenceBundle.name, () => {
  it('accepts an untouched bundle and counts what it checked', () => {
    const sut = verifyEvidenceBundle(JSON.parse(JSON.stringify(sampleBundle())));

    expect(sut).toMatchObject({ ok: true, runId: RUN, workspaceId: WS, streamsChecked: 3, eventsChecked: 11, checkpointsChecked: 2, breaks: [] });
  });

  it('indexes checkpoints, effect receipts and decisions from the events', () => {
    const sut = sampleBundle().index;

    expect(sut.checkpoints.map((entry) => entry.seq)).toEqual([1, 2]);
    expect(sut.effects).toEqual([expect.objectContaining({ effectId: 'eff-1', outcome: 'completed', attempts: 1, outcomeAt: expect.objectContaining({ streamVersion: 4 }) })]);
    expect(sut.decisions.map((entry) => [entry.decision, entry.approvalId])).toEqual([['allow', null], ['approval_required', 'att-1']]);
  });

  it('reports an edited event by stream and position when its data no longer matches its digest', () => {
    const bundle = tampered((b) => {
      (b.streams[0]!.events[6]!.data as { summary: string }).summary = 'something else';
    });

    const sut = verifyEvidenceBundle(bundle);

    const run = (bundle as EvidenceBundle).streams[0]!.events[6]!;
    expect(sut.ok).toBe(false);
    expect(sut.breaks).toContainEqual(expect.objectContaining({ stream: `run-${RUN}`, streamVersion: 7, globalPosition: run.globalPosition, reason: 'digest_mismatch' }));
    expect(sut.breaks).toContainEqual(expect.objectContaining({ reason: 'bundle_digest_mismatch' }));
  });

  it('reports a removed event as a gap in the chain at the event after it', () => {
    const bundle = tampered((b) => {
      b.streams[1]!.events.splice(0, 1);
    }, true);

    const sut = verifyEvidenceBundle(bundle);

    const next = (bundle as EvidenceBundle).streams[1]!.events[0]!;
    expect(sut.breaks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ stream: `policy-${RUN}`, streamVersion: 2, globalPosition: next.globalPosition, reason: 'version_gap' }),
        expect.objectContaining({ stream: `policy-${RUN}`, streamVersion: 2, reason: 'prev_digest_mismatch' }),
        expect.objectContaining({ reason: 'index_mismatch' }),
      ]),
    );
  });

  it('catches an edited checkpoint even when the editor re-digested its event and resealed the bundle', () => {
    const bundle = tampered((b) => {
      const events = b.streams[0]!.events;
      const edited = events[5]!;
      (edited.data as { stateDigest: string }).stateDigest = hex('forged');
      redigest(edited);
      events[6]!.prevDigest = edited.digest;
      redigest(events[6]!);
      b.index.checkpoints[1]!.stateDigest = hex('forged');
      b.index.checkpoints[1]!.eventDigest = edited.digest;
    }, true);

    const sut = verifyEvidenceBundle(bundle);

    const edited = (bundle as EvidenceBundle).streams[0]!.events[5]!;
    expect(sut.breaks).toEqual([expect.objectContaining({ stream: `run-${RUN}`, streamVersion: 6, globalPosition: edited.globalPosition, reason: 'checkpoint_chain' })]);
  });

  it('catches an index that says something the events do not', () => {
    const bundle = tampered((b) => {
      b.index.effects[0]!.outcome = 'failed';
    }, true);

    const sut = verifyEvidenceBundle(bundle);

    expect(sut.breaks).toEqual([expect.objectContaining({ stream: `run-${RUN}`, streamVersion: 3, reason: 'index_mismatch' })]);
  });

  it('refuses events of another workspace or run slipped into the bundle', () => {
    const bundle = tampered((b) => {
      const attention = b.streams[2]!.events[0]!;
      (attention.data as { runId: string }).runId = 'another-run';
      attention.workspaceId = 'ws_other';
      redigest(attention);
      b.streams[2]!.events[1]!.prevDigest = attention.digest;
      redigest(b.streams[2]!.events[1]!);
    }, true);

    const sut = verifyEvidenceBundle(bundle);

    expect(sut.breaks.map((entry) => [entry.stream, entry.reason])).toEqual([
      ['attention-att-1', 'wrong_workspace'],
      ['attention-att-1', 'foreign_event'],
    ]);
  });

  it('reports a document that is not a bundle without throwing', () => {
    const sut = verifyEvidenceBundle({ format: 'something', streams: [{ stream: 'run-x', events: 'no' }] });

    expect(sut.ok).toBe(false);
    expect(sut.breaks.length).toBeGreaterThan(0);
    expect(sut.breaks.every((entry) => entry.reason === 'malformed')).toBe(true);
    expect(sut.breaks).toContainEqual(expect.objectContaining({ stream: 'run-x' }));
  });
});
