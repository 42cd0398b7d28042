import { computeEventDigest, newEventId, type EventEnvelope } from '../envelope';
import type { JsonObject, JsonValue } from '../json';
import { payloadContent, payloadRef } from '../payloads/payload-ref';
import { buildEvidenceBundle, evidenceBundleDigest, type EvidenceBundle } from './evidence-bundle.v1';
import type { EvidencePayload } from './evidence-payloads';
import { verifyEvidenceBundle } from './verify-evidence-bundle';

const WS = 'ws_payloads';
const RUN = '0193a000-0000-7000-8000-0000000000ad';

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
    return { ...body, globalPosition: 200 + index, digest };
  });
}

const text = 'm'.repeat(70_000);
const output = { body: 'o'.repeat(80_000), status: 200 };
const entry = (value: JsonValue): EvidencePayload => {
  const { digest, size } = payloadContent(value);
  return { digest, size, mediaType: 'application/json', value };
};
const textRef = payloadRef(payloadContent(text));
const outputRef = payloadRef(payloadContent(output));

function bundleWith(payloads: EvidencePayload[]): EvidenceBundle {
  const run = chain(`run-${RUN}`, [
    { type: 'run.admitted', data: { deploymentId: 'dep-1' } },
    { type: 'run.model_turn', data: { iteration: 1, text: textRef, toolCalls: [], native: null } },
    { type: 'run.tool_result', data: { callId: 'c1', tool: 'http_fetch', ok: true, output: outputRef, summary: '200 OK', executed: true } },
    { type: 'run.tool_result', data: { callId: 'c2', tool: 'http_fetch', ok: true, output: outputRef, summary: '200 OK', executed: true } },
  ]);
  return buildEvidenceBundle({ runId: RUN, workspaceId: WS, exportedAt: new Date('2026-01-02T00:00:00.000Z'), run, policy: [], attention: [], payloads });
}

function edited(edit: (bundle: EvidenceBundle) => void, reseal = true): EvidenceBundle {
  const copy = JSON.parse(JSON.stringify(bundleWith([entry(text), entry(output)]))) as EvidenceBundle;
  edit(copy);
  if (reseal) copy.bundleDigest = evidenceBundleDigest(copy as unknown as JsonObject);
  return copy;
}

describe('evidence bundles with payload references', () => {
  it('carry the content of every referenced payload, by digest, and verify offline', () => {
    const sut = bundleWith([entry(output), entry(text)]);

    const result = verifyEvidenceBundle(JSON.parse(JSON.stringify(sut)));

    expect(sut.payloads!.map((payload) => payload.digest)).toEqual([textRef.$payload.digest, outputRef.$payload.digest].sort());
    expect(result).toMatchObject({ ok: true, payloadsChecked: 3, breaks: [] });
  });

  it('leave the field out when no event references a payload', () => {
    const sut = buildEvidenceBundle({ runId: RUN, workspaceId: WS, exportedAt: new Date(), run: chain(`run-${RUN}`, [{ type: 'run.admitted', data: {} }]), policy: [], attention: [], payloads: [] });

    expect('payloads' in sut).toBe(false);
    expect(verifyEvidenceBundle(sut)).toMatchObject({ ok: true, payloadsChecked: 0 });
  });

  it('report content altered in the bundle at each event referencing it, naming the digest, even when resealed', () => {
    const bundle = edited((b) => {
      const altered = b.payloads!.find((payload) => payload.digest === outputRef.$payload.digest)!;
      (altered.value as { status: number }).status = 500;
    });

    const sut = verifyEvidenceBundle(bundle);

    expect(sut.ok).toBe(false);
    expect(sut.breaks).toEqual([
      expect.objectContaining({ stream: `run-${RUN}`, streamVersion: 3, reason: 'payload_mismatch', detail: expect.stringContaining(`output references payload ${outputRef.$payload.digest}, whose content in the bundle digests to `) }),
      expect.objectContaining({ stream: `run-${RUN}`, streamVersion: 4, reason: 'payload_mismatch' }),
    ]);
  });

  it('report a payload taken out of the bundle as missing, and an unsealed edit as a bundle digest mismatch too', () => {
    const removed = verifyEvidenceBundle(edited((b) => b.payloads!.splice(b.payloads!.findIndex((payload) => payload.digest === textRef.$payload.digest), 1)));
    const unsealed = verifyEvidenceBundle(edited((b) => (b.payloads![0]!.value = 'replaced'), false));

    expect(removed.breaks).toEqual([
      expect.objectContaining({ streamVersion: 2, reason: 'payload_missing', detail: `text references payload ${textRef.$payload.digest}, which the bundle does not hold` }),
    ]);
    expect(unsealed.breaks.map((entry) => entry.reason).sort()).toEqual(['bundle_digest_mismatch', 'payload_mismatch']);
  });

  it('report a reference whose size is not the size of the content', () => {
    const bundle = edited((b) => (b.payloads!.find((payload) => payload.digest === textRef.$payload.digest)!.size = 1));

    expect(verifyEvidenceBundle(bundle).breaks).toEqual([expect.objectContaining({ streamVersion: 2, reason: 'payload_mismatch', detail: `the bundle says payload ${textRef.$payload.digest} is 1 bytes, its content is ${textRef.$payload.size}` })]);
  });
});
