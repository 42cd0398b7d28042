import { z } from 'zod';
import type { JsonValue } from '../json';
import { collectPayloadRefs, PayloadDigestSchema, payloadContent, PAYLOAD_MEDIA_TYPE, type PayloadBreakReason } from '../payloads/payload-ref';

/**
 * The content of a payload an event of the bundle references, as the JSON value itself: a
 * verifier recomputes the canonical JSON and its SHA-256, so the bundle needs no other trust.
 */
export const EvidencePayloadSchema = z.object({
  digest: PayloadDigestSchema,
  size: z.number().int().nonnegative(),
  mediaType: z.literal(PAYLOAD_MEDIA_TYPE),
  value: z.json(),
});
export type EvidencePayload = z.infer<typeof EvidencePayloadSchema>;

type Located = { stream: string; streamVersion: number; globalPosition: number };
type PayloadSink = (where: { stream: string | null; streamVersion?: number; globalPosition?: number }, reason: PayloadBreakReason | 'malformed', detail: string) => void;

/** The distinct digests the events reference, in first-seen order. */
export function referencedDigests(events: Iterable<{ data: unknown }>): Array<{ digest: string; size: number }> {
  const seen = new Map<string, number>();
  for (const event of events) for (const { ref } of collectPayloadRefs(event.data)) if (!seen.has(ref.digest)) seen.set(ref.digest, ref.size);
  return [...seen].map(([digest, size]) => ({ digest, size }));
}

/**
 * Every reference in the bundle's events must have its content in `payloads`, and that content
 * must hash to the digest with the size the event says. Answers the references checked.
 */
export function checkEvidencePayloads(
  streams: ReadonlyArray<{ stream: string; events: ReadonlyArray<Omit<Located, 'stream'> & { data: unknown }> }>,
  payloads: readonly EvidencePayload[],
  report: PayloadSink,
): number {
  const byDigest = new Map<string, EvidencePayload>();
  for (const payload of payloads) {
    if (byDigest.has(payload.digest)) report({ stream: null }, 'malformed', `payload ${payload.digest} appears twice`);
    byDigest.set(payload.digest, payload);
  }
  const actual = new Map<string, { digest: string; size: number } | null>();
  const contentOf = (payload: EvidencePayload) => {
    if (!actual.has(payload.digest)) {
      try {
        const { digest, size } = payloadContent(payload.value as JsonValue);
        actual.set(payload.digest, { digest, size });
      } catch {
        actual.set(payload.digest, null);
      }
    }
    return actual.get(payload.digest)!;
  };
  let checked = 0;
  for (const stream of streams) {
    for (const event of stream.events) {
      for (const { path, ref } of collectPayloadRefs(event.data)) {
        checked++;
        const at = { stream: stream.stream, streamVersion: event.streamVersion, globalPosition: event.globalPosition };
        const field = path || '(data)';
        const payload = byDigest.get(ref.digest);
        if (!payload) {
          report(at, 'payload_missing', `${field} references payload ${ref.digest}, which the bundle does not hold`);
          continue;
        }
        const content = contentOf(payload);
        if (content === null) report(at, 'payload_mismatch', `${field} references payload ${ref.digest}, whose value in the bundle has no canonical form`);
        else if (content.digest !== ref.digest) report(at, 'payload_mismatch', `${field} references payload ${ref.digest}, whose content in the bundle digests to ${content.digest}`);
        else if (content.size !== ref.size) report(at, 'payload_mismatch', `${field} says payload ${ref.digest} is ${ref.size} bytes, it is ${content.size}`);
        else if (payload.size !== content.size) report(at, 'payload_mismatch', `the bundle says payload ${ref.digest} is ${payload.size} bytes, its content is ${content.size}`);
      }
    }
  }
  return checked;
}
