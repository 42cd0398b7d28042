import type { Pool } from 'pg';
import { ChainVerifier } from '@packetagent/contracts';
import { withSpan } from '@packetagent/telemetry';
import { rowToEnvelope, type EventRow } from './rows';
import type { PayloadStore } from './payloads/payload-store';
import { PostgresPayloadStore } from './payloads/postgres-payload-store';
import { verifyPayloadReferences, withPayloadBreaks, type StoreAuditReport } from './payloads/verify-payloads';

export {
  assertChain,
  ChainBrokenError,
  ChainVerifier,
  verifyChain,
  type ChainBreak,
  type ChainLink,
  type ChainReport,
} from '@packetagent/contracts';

/**
 * Walks every stream's hash chain in the store (see `ChainVerifier`), reading in pages to bound
 * memory, then checks that every payload reference names intact stored content (see
 * `verifyPayloadReferences`; the Postgres payload store unless another is given).
 */
export async function verifyDigestChains(
  pool: Pool,
  options: { workspaceId?: string; pageSize?: number; payloads?: PayloadStore } = {},
): Promise<StoreAuditReport> {
  return withSpan('eventstore.verify_chains', { attributes: { 'pa.workspace': options.workspaceId ?? '*' } }, async () => {
    const pageSize = options.pageSize ?? 2_000;
    const chain = new ChainVerifier();
    let after: { stream: string; version: number } = { stream: '', version: 0 };
    for (;;) {
      const { rows } = await pool.query<EventRow>(
        `SELECT * FROM events
          WHERE (stream_id, stream_version) > ($1, $2) AND ($4::text IS NULL OR workspace_id = $4)
          ORDER BY stream_id, stream_version LIMIT $3`,
        [after.stream, after.version, pageSize, options.workspaceId ?? null],
      );
      if (rows.length === 0) break;
      for (const row of rows) chain.check(rowToEnvelope(row));
      const last = rows[rows.length - 1]!;
      after = { stream: last.stream_id, version: Number(last.stream_version) };
    }
    const payloads = await verifyPayloadReferences(pool, options.payloads ?? new PostgresPayloadStore(pool), { workspaceId: options.workspaceId });
    return withPayloadBreaks(chain.report(), payloads);
  });
}
