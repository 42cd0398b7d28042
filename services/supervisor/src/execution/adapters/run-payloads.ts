import { canonicalJson, collectPayloadRefs, isPayloadRef, parsePayload, resolvePayloadRefs, type DecodedEvent, type JsonObject, type JsonValue } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';
import { UnreplayableRunError } from '../../run/run.state';

/** Where a large value may stand in a run event; each is replaced by a payload reference when large. */
type Slot = { get: () => JsonValue | undefined; set: (ref: JsonValue) => void };

function slotsOf(type: string, data: JsonObject): Slot[] {
  const field = (holder: JsonObject, key: string): Slot => ({ get: () => holder[key], set: (ref) => (holder[key] = ref) });
  if (type === 'run.tool_result') return [field(data, 'output')];
  if (type !== 'run.model_turn') return [];
  const calls = Array.isArray(data['toolCalls']) ? (data['toolCalls'] as JsonObject[]) : [];
  return [field(data, 'text'), field(data, 'native'), ...calls.map((call) => field(call, 'arguments'))];
}

/** A copy whose slot holders may be changed without touching the caller's event (slot values themselves are shared). */
function copyOfSlots(data: JsonObject): JsonObject {
  const copy: JsonObject = { ...data };
  if (Array.isArray(data['toolCalls'])) copy['toolCalls'] = (data['toolCalls'] as JsonObject[]).map((call) => ({ ...call }));
  return copy;
}

const sizeOf = (value: JsonValue): number => Buffer.byteLength(canonicalJson(value), 'utf8');

/**
 * Model transcripts, tool arguments and tool results go to the payload store, content-addressed,
 * when they pass `thresholdBytes`, and the event carries the reference; anything still too large
 * for one event goes too, largest first. The content is stored before the event that names it,
 * so no reader ever meets a reference it cannot resolve.
 */
export async function externalizePayloads(
  payloads: PayloadStore,
  workspaceId: string,
  event: { type: string; data: unknown },
  limits: { thresholdBytes: number; eventBudgetBytes: number },
): Promise<unknown> {
  const escaped = await escapeMarkers(payloads, workspaceId, event.data as JsonValue);
  if (event.type !== 'run.tool_result' && event.type !== 'run.model_turn') return escaped;
  const data = copyOfSlots(escaped as JsonObject);
  const slots = slotsOf(event.type, data)
    .map((slot) => ({ slot, value: slot.get() }))
    .filter((entry): entry is { slot: Slot; value: JsonValue } => entry.value !== undefined && entry.value !== null && !isPayloadRef(entry.value))
    .map((entry) => ({ ...entry, size: sizeOf(entry.value) }))
    .sort((a, b) => b.size - a.size);
  if (slots.length === 0 || (slots[0]!.size <= limits.thresholdBytes && sizeOf(data) <= limits.eventBudgetBytes)) return data;
  let eventBytes = sizeOf(data);
  for (const entry of slots) {
    if (entry.size <= limits.thresholdBytes && eventBytes <= limits.eventBudgetBytes) continue;
    const ref = await payloads.putJson(workspaceId, entry.value);
    entry.slot.set(ref);
    eventBytes += sizeOf(ref) - entry.size;
  }
  return data;
}

/**
 * Content from outside (a far side's JSON, a model's arguments) may hold an object shaped like a
 * payload reference. Stored inline it would be read back as one, so it is stored by reference
 * itself: resolved content is never searched for references again.
 */
async function escapeMarkers(payloads: PayloadStore, workspaceId: string, data: JsonValue): Promise<JsonValue> {
  if (collectPayloadRefs(data).length === 0) return data;
  const walk = async (value: JsonValue): Promise<JsonValue> => {
    if (Array.isArray(value)) return Promise.all(value.map(walk));
    if (typeof value !== 'object' || value === null) return value;
    if (isPayloadRef(value)) return payloads.putJson(workspaceId, value);
    const entries = await Promise.all(Object.entries(value).map(async ([key, item]) => [key, await walk(item)] as const));
    return Object.fromEntries(entries);
  };
  return walk(data);
}

/** The events with every payload reference replaced by its content, verified; a missing or altered payload makes the run unreplayable. */
export async function resolveRunPayloads(payloads: PayloadStore, workspaceId: string, events: DecodedEvent[]): Promise<DecodedEvent[]> {
  const digests = [...new Set(events.flatMap((event) => collectPayloadRefs(event.data).map((found) => found.ref.digest)))];
  if (digests.length === 0) return events;
  const reads = await payloads.read(workspaceId, digests);
  return events.map((event) => {
    if (collectPayloadRefs(event.data).length === 0) return event;
    const data = resolvePayloadRefs(event.data as JsonValue, (ref) => {
      const read = reads.get(ref.digest);
      if (!read || read.status !== 'ok') {
        throw new UnreplayableRunError(`payload ${ref.digest} named by ${event.type} at version ${event.streamVersion} is ${read?.status === 'mismatch' ? 'altered' : 'missing'}`);
      }
      if (read.bytes.length !== ref.size) throw new UnreplayableRunError(`payload ${ref.digest} named by ${event.type} at version ${event.streamVersion} has ${read.bytes.length} bytes, not ${ref.size}`);
      return parsePayload(read.bytes);
    });
    return { ...event, data };
  });
}
