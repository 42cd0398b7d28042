import type { DeliveryAttempt, DeliveryRoute, DeliveryView, NotificationTrigger } from '@packetagent/contracts';
import type { OutboundMessage } from '../channels/channel';

export interface DeliveryRow {
  delivery_id: string;
  workspace_id: string;
  idempotency_key: string;
  trigger: NotificationTrigger;
  route: DeliveryRoute;
  message: OutboundMessage;
  run_id: string | null;
  deployment_id: string | null;
  attention_id: string | null;
  source_event_id: string;
  thread_key: string | null;
  state: 'pending' | 'delivered' | 'dead';
  attempts: number;
  attempt_log: DeliveryAttempt[];
  backoff_ms: number[];
  next_attempt_at: Date | null;
  lease_owner: string | null;
  lease_until: Date | null;
  expires_at: Date;
  delivered_at: Date | null;
  last_error: { code: string; message: string } | null;
  stream_version: number;
  created_at: Date;
}

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    deliveryId: row.delivery_id,
    workspaceId: row.workspace_id,
    idempotencyKey: row.idempotency_key,
    trigger: row.trigger,
    route: row.route,
    state: row.state,
    runId: row.run_id,
    deploymentId: row.deployment_id,
    attentionId: row.attention_id,
    sourceEventId: row.source_event_id,
    attempts: row.attempts,
    attemptLog: row.attempt_log,
    nextAttemptAt: row.state === 'pending' && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    expiresAt: row.expires_at.toISOString(),
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
  };
}
