import { z } from 'zod';
import { collectPayloadRefs, parsePayload, PayloadDigestSchema, resolvePayloadRefs, type JsonValue, type PayloadRefAt } from '@packetagent/contracts';
import type { PayloadRead, PayloadStore } from '@packetagent/eventstore';

/** Upper bound of payload content put into one page of events, in bytes. */
export const PAGE_INLINE_BYTES = 8 * 1024 * 1024;

export const PAYLOAD_MODES = ['inline', 'ref'] as const;
export type PayloadMode = (typeof PAYLOAD_MODES)[number];

/**
 * What became of a reference in an answered event: `inline` replaced by its content (verified
 * against the digest), `reference` left as asked (`payloads=ref`), `too_large` left because it
 * alone is above what a page carries, `missing` and `mismatch` left because the store has no
 * intact content for it. Whatever is left, GET .../payloads/{digest} answers (or refuses).
 */
export const PAYLOAD_STATES = ['inline', 'reference', 'too_large', 'missing', 'mismatch'] as const;

export const EventPayloadSchema = z.object({
  /** Where the reference stands in the event's data, e.g. `toolCalls[0].arguments`. */
  path: z.string(),
  digest: PayloadDigestSchema,
  size: z.number().int().nonnegative(),
  mediaType: z.string(),
  state: z.enum(PAYLOAD_STATES),
});
export type EventPayload = z.infer<typeof EventPayloadSchema>;

export interface PayloadPage<T> {
  items: Array<Omit<T, 'data'> & { data: JsonValue; payloads?: EventPayload[] }>;
  /** True when the page stopped before `limit` events because the next one's payloads would not fit. */
  cut: boolean;
}

/**
 * Resolves the references of a page of events. In `inline` mode the page takes events while
 * their payloads fit in `budgetBytes` (always at least one event, a payload above the budget is
 * left as a reference), reads the payloads in one call and puts each verified content in place.
 * Events without references pass through unchanged.
 */
export async function resolvePage<T extends { data: JsonValue }>(
  store: PayloadStore,
  workspaceId: string,
  rows: readonly T[],
  options: { limit: number; mode: PayloadMode; budgetBytes?: number },
): Promise<PayloadPage<T>> {
  const budget = options.budgetBytes ?? PAGE_INLINE_BYTES;
  const taken: Array<{ row: T; refs: PayloadRefAt[] }> = [];
  const wanted = new Map<string, number>();
  let bytes = 0;
  let cut = false;
  for (const row of rows.slice(0, options.limit)) {
    const refs = collectPayloadRefs(row.data);
    if (options.mode === 'inline') {
      const fresh = refs.filter(({ ref }) => ref.size <= budget && !wanted.has(ref.digest));
      const adds = [...new Map(fresh.map(({ ref }) => [ref.digest, ref.size])).values()].reduce((sum, size) => sum + size, 0);
      if (taken.length > 0 && bytes + adds > budget) {
        cut = true;
        break;
      }
      for (const { ref } of fresh) wanted.set(ref.digest, ref.size);
      bytes += adds;
    }
    taken.push({ row, refs });
  }
  const reads: Map<string, PayloadRead> = wanted.size ? await store.read(workspaceId, [...wanted.keys()]) : new Map();
  const values = new Map<string, JsonValue>();
  const valueOf = (digest: string): JsonValue | undefined => {
    const read = reads.get(digest);
    if (read?.status !== 'ok') return undefined;
    if (!values.has(digest)) values.set(digest, parsePayload(read.bytes));
    return values.get(digest);
  };
  const items = taken.map(({ row, refs }) => {
    if (refs.length === 0) return row;
    const payloads: EventPayload[] = refs.map(({ path, ref }) => {
      const read = reads.get(ref.digest);
      const state: EventPayload['state'] =
        options.mode === 'ref' ? 'reference' : ref.size > budget ? 'too_large' : read?.status === 'ok' ? (read.bytes.length === ref.size ? 'inline' : 'mismatch') : (read?.status ?? 'missing');
      return { path, digest: ref.digest, size: ref.size, mediaType: ref.mediaType, state };
    });
    const inline = new Set(payloads.filter((payload) => payload.state === 'inline').map((payload) => payload.path));
    const data = inline.size ? resolvePayloadRefs(row.data, (ref, path) => (inline.has(path) ? valueOf(ref.digest) : undefined)) : row.data;
    return { ...row, data, payloads };
  });
  return { items, cut };
}
