import type { Pool } from 'pg';
import { payloadMatches, sha256Hex, type PayloadContent } from '@packetagent/contracts';
import { withSpan } from '@packetagent/telemetry';
import { assertDigests, assertWorkspace, DEFAULT_MAX_PAYLOAD_BYTES, PayloadStore, type PayloadRead, type PayloadState } from './payload-store';

/**
 * Payloads in `eventstore.payloads`, one row per (workspace, digest). A put that finds the row
 * already there does nothing (the same digest is the same content); a check hashes the content
 * inside Postgres, so verifying a large store moves digests, not blobs.
 */
export class PostgresPayloadStore extends PayloadStore {
  constructor(
    private readonly pool: Pool,
    options: { maxBytes?: number } = {},
  ) {
    super(options.maxBytes ?? DEFAULT_MAX_PAYLOAD_BYTES);
  }

  protected async write(workspaceId: string, content: PayloadContent): Promise<void> {
    await withSpan('eventstore.payload_put', { attributes: { 'pa.workspace': workspaceId, 'pa.payload_bytes': content.size } }, () =>
      this.pool.query(
        `INSERT INTO eventstore.payloads (workspace_id, digest, size, media_type, content) VALUES ($1, $2, $3, 'application/json', $4)
         ON CONFLICT (workspace_id, digest) DO NOTHING`,
        [workspaceId, content.digest, content.size, content.bytes],
      ),
    );
  }

  async read(workspaceId: string, digests: readonly string[]): Promise<Map<string, PayloadRead>> {
    assertWorkspace(workspaceId);
    assertDigests(digests);
    const answer = new Map<string, PayloadRead>(digests.map((digest) => [digest, { status: 'missing' }]));
    if (digests.length === 0) return answer;
    const { rows } = await withSpan('eventstore.payload_read', { attributes: { 'pa.workspace': workspaceId, 'pa.payload_count': digests.length } }, () =>
      this.pool.query<{ digest: string; content: Buffer }>(`SELECT digest, content FROM eventstore.payloads WHERE workspace_id = $1 AND digest = ANY($2::text[])`, [
        workspaceId,
        [...new Set(digests)],
      ]),
    );
    for (const row of rows) {
      // The digest is the claim; the stored size column is not trusted either.
      const intact = payloadMatches(row.content, { digest: row.digest, size: row.content.length });
      answer.set(row.digest, intact ? { status: 'ok', bytes: row.content } : { status: 'mismatch', actualDigest: sha256Hex(row.content), size: row.content.length });
    }
    return answer;
  }

  async check(workspaceId: string, digests: readonly string[]): Promise<Map<string, PayloadState>> {
    assertWorkspace(workspaceId);
    assertDigests(digests);
    const answer = new Map<string, PayloadState>(digests.map((digest) => [digest, { status: 'missing' }]));
    if (digests.length === 0) return answer;
    const { rows } = await withSpan('eventstore.payload_check', { attributes: { 'pa.workspace': workspaceId, 'pa.payload_count': digests.length } }, () =>
      this.pool.query<{ digest: string; actual: string; size: string }>(
        `SELECT digest, encode(sha256(content), 'hex') AS actual, octet_length(content) AS size
           FROM eventstore.payloads WHERE workspace_id = $1 AND digest = ANY($2::text[])`,
        [workspaceId, [...new Set(digests)]],
      ),
    );
    for (const row of rows) {
      const size = Number(row.size);
      answer.set(row.digest, row.actual === row.digest ? { status: 'ok', size } : { status: 'mismatch', actualDigest: row.actual, size });
    }
    return answer;
  }
}
