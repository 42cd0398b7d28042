import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import {
  attentionStream,
  buildEvidenceBundle,
  isJsonObject,
  parsePayload,
  PAYLOAD_MEDIA_TYPE,
  policyStream,
  referencedDigests,
  type EvidenceBundle,
  type EvidencePayload,
  type EventEnvelope,
} from '@packetagent/contracts';
import { PayloadStore, PG_POOL, rowToEnvelope, type EventRow } from '@packetagent/eventstore';
import { withSpan } from '@packetagent/telemetry';
import { EvidencePayloadsTooLargeError, EvidenceTooLargeError } from '../audit.errors';
import { assertRunInWorkspace } from '../run-streams';

/** Upper bound of events in one bundle, across the run's streams. */
export const MAX_EVIDENCE_EVENTS = 50_000;

/** Upper bound of referenced payload content in one bundle, in bytes. */
export const MAX_EVIDENCE_PAYLOAD_BYTES = 64 * 1024 * 1024;

/** Digests read from the payload store per round trip. */
const PAYLOAD_READ_BATCH = 32;

/** Events of a run that name the attention records it waited on. */
const ATTENTION_REFERENCES: Readonly<Record<string, string>> = {
  'run.waiting': 'attentionId',
  'run.rejected': 'attentionId',
  'run.expired': 'attentionId',
  'policy.decided': 'approvalId',
};

/**
 * Reads the run stream, its policy decisions and the attention records they name in one
 * repeatable-read snapshot, so a run that keeps appending still exports a consistent prefix
 * of every stream, and seals them into a bundle with the content of every payload the events
 * reference. Payloads are immutable under their digest, so they are read after the snapshot; one
 * that is missing or no longer matches its digest is left out, and the offline verifier names it.
 */
@Injectable()
export class ExportEvidence {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly payloads: PayloadStore,
  ) {}

  async execute(workspaceId: string, runId: string, now = new Date()): Promise<EvidenceBundle> {
    return withSpan('audit.export_evidence', { attributes: { 'pa.workspace': workspaceId, 'pa.run': runId } }, async () => {
      const client = await this.pool.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const runStream = await assertRunInWorkspace(client, workspaceId, runId);
        const budget = { left: MAX_EVIDENCE_EVENTS };
        const run = await this.readStreams(client, workspaceId, [runStream], budget);
        const policy = await this.readStreams(client, workspaceId, [policyStream(runId)], budget);
        const attentionIds = new Set<string>();
        for (const event of [...run, ...policy]) {
          const field = ATTENTION_REFERENCES[event.type];
          const id = field && isJsonObject(event.data) ? event.data[field] : undefined;
          if (typeof id === 'string') attentionIds.add(id);
        }
        const attention = await this.readStreams(client, workspaceId, [...attentionIds].map(attentionStream), budget);
        await client.query('COMMIT');
        const byStream = new Map<string, EventEnvelope[]>();
        for (const event of attention) byStream.set(event.stream, [...(byStream.get(event.stream) ?? []), event]);
        const payloads = await this.readPayloads(workspaceId, [...run, ...policy, ...attention]);
        return buildEvidenceBundle({ runId, workspaceId, exportedAt: now, run, policy, attention: [...byStream.values()], payloads });
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    });
  }

  /** The intact content of every payload the events reference; the size limit is checked on the references first. */
  private async readPayloads(workspaceId: string, events: readonly EventEnvelope[]): Promise<EvidencePayload[]> {
    const wanted = referencedDigests(events);
    const bytes = wanted.reduce((sum, { size }) => sum + size, 0);
    if (bytes > MAX_EVIDENCE_PAYLOAD_BYTES) throw new EvidencePayloadsTooLargeError(bytes, MAX_EVIDENCE_PAYLOAD_BYTES);
    const found: EvidencePayload[] = [];
    for (let i = 0; i < wanted.length; i += PAYLOAD_READ_BATCH) {
      const reads = await this.payloads.read(workspaceId, wanted.slice(i, i + PAYLOAD_READ_BATCH).map(({ digest }) => digest));
      for (const [digest, read] of reads) {
        if (read.status === 'ok') found.push({ digest, size: read.bytes.length, mediaType: PAYLOAD_MEDIA_TYPE, value: parsePayload(read.bytes) });
      }
    }
    return found;
  }

  /** Whole streams in stream order; the limit is checked before anything large is held. */
  private async readStreams(client: PoolClient, workspaceId: string, streams: string[], budget: { left: number }): Promise<EventEnvelope[]> {
    if (streams.length === 0) return [];
    const { rows: counted } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM events WHERE stream_id = ANY($1) AND workspace_id = $2`,
      [streams, workspaceId],
    );
    budget.left -= Number(counted[0]!.n);
    if (budget.left < 0) throw new EvidenceTooLargeError(MAX_EVIDENCE_EVENTS - budget.left, MAX_EVIDENCE_EVENTS);
    const { rows } = await client.query<EventRow>(
      `SELECT * FROM events WHERE stream_id = ANY($1) AND workspace_id = $2 ORDER BY stream_id, stream_version`,
      [streams, workspaceId],
    );
    return rows.map(rowToEnvelope);
  }
}
