import type { Pool } from 'pg';
import { collectPayloadRefs, type ChainBreak, type ChainReport, type PayloadBreakReason } from '@packetagent/contracts';
import { withSpan } from '@packetagent/telemetry';
import type { PayloadStore } from './payload-store';

/** A reference whose payload is not stored, or not intact, at the event that holds it. */
export interface PayloadBreak {
  stream: string;
  streamVersion: number;
  globalPosition: number;
  reason: PayloadBreakReason;
  detail: string;
  payloadDigest: string;
}

export interface PayloadReferenceReport {
  /** References checked: one per event field that holds one. */
  payloadsChecked: number;
  breaks: PayloadBreak[];
}

/** Finds the events that can hold a reference without decoding every event in Node. */
const HOLDS_MARKER = 'strict $.**."$payload"';

/**
 * Every reference in the events (of one workspace, or all) must name a payload stored in the
 * event's own workspace whose content hashes to the digest and has the size the event says.
 * Breaks are in (stream, version) order, each naming the payload's digest.
 */
export async function verifyPayloadReferences(
  pool: Pool,
  payloads: PayloadStore,
  options: { workspaceId?: string; pageSize?: number } = {},
): Promise<PayloadReferenceReport> {
  return withSpan('eventstore.verify_payloads', { attributes: { 'pa.workspace': options.workspaceId ?? '*' } }, async () => {
    const pageSize = options.pageSize ?? 500;
    const breaks: PayloadBreak[] = [];
    let checked = 0;
    let after = { stream: '', version: 0 };
    for (;;) {
      const { rows } = await pool.query<{ stream_id: string; stream_version: string; global_position: string; workspace_id: string; data: unknown }>(
        `SELECT stream_id, stream_version, global_position, workspace_id, data FROM events
          WHERE (stream_id, stream_version) > ($1, $2) AND ($4::text IS NULL OR workspace_id = $4) AND jsonb_path_exists(data, $5::jsonpath)
          ORDER BY stream_id, stream_version LIMIT $3`,
        [after.stream, after.version, pageSize, options.workspaceId ?? null, HOLDS_MARKER],
      );
      if (rows.length === 0) break;
      const found = rows.flatMap((row) =>
        collectPayloadRefs(row.data).map(({ path, ref }) => ({
          at: { stream: row.stream_id, streamVersion: Number(row.stream_version), globalPosition: Number(row.global_position) },
          workspaceId: row.workspace_id,
          path,
          ref,
        })),
      );
      const byWorkspace = new Map<string, string[]>();
      for (const { workspaceId, ref } of found) byWorkspace.set(workspaceId, [...(byWorkspace.get(workspaceId) ?? []), ref.digest]);
      const states = new Map<string, Awaited<ReturnType<PayloadStore['check']>>>();
      for (const [workspaceId, digests] of byWorkspace) states.set(workspaceId, await payloads.check(workspaceId, [...new Set(digests)]));
      for (const { at, workspaceId, path, ref } of found) {
        checked++;
        const state = states.get(workspaceId)?.get(ref.digest) ?? { status: 'missing' as const };
        const field = path || '(data)';
        if (state.status === 'missing') {
          breaks.push({ ...at, reason: 'payload_missing', payloadDigest: ref.digest, detail: `${field} references payload ${ref.digest}, which is not stored` });
        } else if (state.status === 'mismatch') {
          breaks.push({ ...at, reason: 'payload_mismatch', payloadDigest: ref.digest, detail: `${field} references payload ${ref.digest}, whose stored content digests to ${state.actualDigest}` });
        } else if (state.size !== ref.size) {
          breaks.push({ ...at, reason: 'payload_mismatch', payloadDigest: ref.digest, detail: `${field} says payload ${ref.digest} is ${ref.size} bytes, it is ${state.size}` });
        }
      }
      const last = rows[rows.length - 1]!;
      after = { stream: last.stream_id, version: Number(last.stream_version) };
    }
    return { payloadsChecked: checked, breaks };
  });
}

/** What audit verification reports for the store: the chains' breaks, then the payload references'. */
export interface StoreAuditReport extends Omit<ChainReport, 'breaks'> {
  payloadsChecked: number;
  breaks: Array<ChainBreak | PayloadBreak>;
}

export function withPayloadBreaks(chains: ChainReport, payloads: PayloadReferenceReport): StoreAuditReport {
  return {
    ...chains,
    ok: chains.ok && payloads.breaks.length === 0,
    payloadsChecked: payloads.payloadsChecked,
    breaks: [...chains.breaks, ...payloads.breaks],
  };
}
