import type { Pool } from 'pg';
import { computeEventDigest } from '@packetagent/contracts';
import { withSpan } from '@packetagent/telemetry';
import { rowToEnvelope, type EventRow } from './rows';

export interface ChainBreak {
  stream: string;
  streamVersion: number;
  globalPosition: number;
  reason: 'digest_mismatch' | 'prev_digest_mismatch' | 'version_gap';
  detail: string;
}

export interface ChainReport {
  ok: boolean;
  streamsChecked: number;
  eventsChecked: number;
  breaks: ChainBreak[];
}

/**
 * Walks every stream's hash chain: each event's digest must equal SHA-256 of its canonical
 * content, link to the previous event's digest and follow it without a version gap. Reads in
 * pages to bound memory.
 */
export async function verifyDigestChains(pool: Pool, options: { workspaceId?: string; pageSize?: number } = {}): Promise<ChainReport> {
  return withSpan('eventstore.verify_chains', { attributes: { 'pa.workspace': options.workspaceId ?? '*' } }, async () => {
    const pageSize = options.pageSize ?? 2_000;
    const breaks: ChainBreak[] = [];
    let streams = 0;
    let events = 0;
    let after: { stream: string; version: number } = { stream: '', version: 0 };
    let previous = null as { stream: string; version: number; digest: string } | null;
    for (;;) {
      const { rows } = await pool.query<EventRow>(
        `SELECT * FROM events
          WHERE (stream_id, stream_version) > ($1, $2) AND ($4::text IS NULL OR workspace_id = $4)
          ORDER BY stream_id, stream_version LIMIT $3`,
        [after.stream, after.version, pageSize, options.workspaceId ?? null],
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        const event = rowToEnvelope(row);
        const at = { stream: event.stream, streamVersion: event.streamVersion, globalPosition: event.globalPosition };
        const sameStream: boolean = previous?.stream === event.stream;
        if (!sameStream) {
                streams++;
        }
        const expectedVersion: number = sameStream ? previous!.version + 1 : 1;
        const expectedPrev = sameStream ? previous!.digest : null;
        if (event.streamVersion !== expectedVersion) {
          breaks.push({ ...at, reason: 'version_gap', detail: `expected version ${expectedVersion}` });
        }
        if (event.prevDigest !== expectedPrev) {
          breaks.push({ ...at, reason: 'prev_digest_mismatch', detail: `links to ${event.prevDigest ?? 'nothing'}, previous is ${expectedPrev ?? 'nothing'}` });
        }
        const recomputed = computeEventDigest(event);
        if (recomputed !== event.digest) {
          breaks.push({ ...at, reason: 'digest_mismatch', detail: 'content does not match its digest' });
        }
        previous = { stream: event.stream, version: event.streamVersion, digest: event.digest };
        events++;
      }
      const last = rows[rows.length - 1]!;
      after = { stream: last.stream_id, version: Number(last.stream_version) };
    }
    return { ok: breaks.length === 0, streamsChecked: streams, eventsChecked: events, breaks };
  });
}
