import type { EventEnvelope, JsonValue } from '@packetagent/contracts';

export interface EventRow {
  global_position: string;
  event_id: string;
  stream_id: string;
  stream_version: string;
  type: string;
  schema_version: number;
  workspace_id: string;
  occurred_at: Date;
  data: JsonValue;
  metadata: {
    causationId: string | null;
    correlationId: string | null;
    traceparent: string | null;
    actor: EventEnvelope['actor'];
  };
  digest: string;
  prev_digest: string | null;
}

export function rowToEnvelope(row: EventRow): EventEnvelope {
  return {
    id: row.event_id,
    type: row.type,
    schemaVersion: row.schema_version,
    stream: row.stream_id,
    streamVersion: Number(row.stream_version),
    globalPosition: Number(row.global_position),
    workspaceId: row.workspace_id,
    occurredAt: row.occurred_at.toISOString(),
    causationId: row.metadata.causationId ?? null,
    correlationId: row.metadata.correlationId ?? null,
    traceparent: row.metadata.traceparent ?? null,
    actor: row.metadata.actor,
    data: row.data,
    digest: row.digest,
    prevDigest: row.prev_digest,
  };
}
