import { collectPayloadRefs, type JsonValue } from '@packetagent/contracts';

/**
 * The fields of an event stored by reference, with their size and digest: a timeline line says
 * a turn's text was 600 KB without holding it (the content is one GET away, by digest).
 */
export function payloadSummary(data: unknown): { payloads?: JsonValue } {
  const refs = collectPayloadRefs(data);
  return refs.length ? { payloads: refs.map(({ path, ref }) => ({ path, size: ref.size, digest: ref.digest })) } : {};
}
