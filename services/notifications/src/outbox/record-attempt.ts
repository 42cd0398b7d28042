import { deliveryStream, type DeliveryAttempt, type NotificationEventData } from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import type { ChannelOutcome } from '../channels/channel';
import { NOTIFICATIONS_ACTOR } from '../shared/actor';
import { retryDelayMs, type BackoffPolicy } from './backoff';
import type { DeliveryRow } from './delivery.rows';

const PROGRESS_THREADS: ReadonlySet<string> = new Set(['progress']);

export type AttemptResult = { kind: 'delivered' } | { kind: 'retry'; delayMs: number } | { kind: 'dead'; code: string } | { kind: 'lost_lease' };

/**
 * Records one attempt under the lease it was made with: delivered, due again after the backoff
 * (or the receiver's Retry-After), or dead-lettered (not retryable, or the next try would fall
 * past the expiry). A replica whose lease lapsed meanwhile records nothing: the delivery is
 * another's now, and the receiver deduplicates the repeat on its webhook-id.
 */
export async function recordAttempt(
  store: PostgresEventStore,
  input: { row: DeliveryRow; owner: string; outcome: ChannelOutcome; startedAt: Date; now: Date; policy: BackoffPolicy; random: () => number },
): Promise<AttemptResult> {
  const { row, outcome, now } = input;
  return store.transaction(async (client) => {
    const { rows } = await client.query<DeliveryRow>(
      `SELECT * FROM notifications.deliveries WHERE delivery_id = $1 AND lease_owner = $2 AND state = 'pending' FOR UPDATE`,
      [row.delivery_id, input.owner],
    );
    const current = rows[0];
    if (!current) return { kind: 'lost_lease' } as const;
    const previous = current.attempt_log[current.attempt_log.length - 1];
    const attempt: DeliveryAttempt = {
      at: input.startedAt.toISOString(),
      afterMs: previous ? Math.max(0, input.startedAt.getTime() - Date.parse(previous.at)) : null,
      outcome: outcome.ok ? 'delivered' : 'failed',
      status: outcome.status,
      code: outcome.ok ? null : outcome.code,
      message: outcome.ok ? null : outcome.message.slice(0, 1000),
    };
    const attempts = current.attempts + 1;
    const log = [...current.attempt_log, attempt];
    const append = (type: string, data: unknown) =>
      store.append(deliveryStream(current.delivery_id), current.stream_version, [{ type, data, actor: NOTIFICATIONS_ACTOR }], { workspaceId: current.workspace_id, client });

    if (outcome.ok) {
      await client.query(
        `UPDATE notifications.deliveries SET state = 'delivered', attempts = $2, attempt_log = $3::jsonb, delivered_at = $4, lease_owner = NULL, lease_until = NULL,
                next_attempt_at = NULL, stream_version = stream_version + 1 WHERE delivery_id = $1`,
        [current.delivery_id, attempts, JSON.stringify(log), now],
      );
      if (outcome.threadRef && current.thread_key && PROGRESS_THREADS.has(current.trigger)) {
        await client.query(
          `INSERT INTO notifications.threads (thread_key, ref, updated_at) VALUES ($1, $2, $3) ON CONFLICT (thread_key) DO UPDATE SET ref = EXCLUDED.ref, updated_at = EXCLUDED.updated_at`,
          [current.thread_key, outcome.threadRef, now],
        );
      }
      const data: NotificationEventData<'notification.delivered'> = { deliveryId: current.delivery_id, attempts, backoffMs: current.backoff_ms, status: outcome.status };
      await append('notification.delivered', data);
      return { kind: 'delivered' } as const;
    }

    const delayMs = outcome.retryable ? retryDelayMs(input.policy, attempts, input.random, outcome.retryAfterMs) : 0;
    const expired = outcome.retryable && now.getTime() + delayMs > current.expires_at.getTime();
    if (!outcome.retryable || expired) {
      const reason = expired
        ? { code: 'expired', message: `not delivered by ${current.expires_at.toISOString()} after ${attempts} attempt${attempts === 1 ? '' : 's'}; the last: ${outcome.code} (${outcome.message})`.slice(0, 1000) }
        : { code: outcome.code, message: outcome.message.slice(0, 1000) };
      await client.query(
        `UPDATE notifications.deliveries SET state = 'dead', attempts = $2, attempt_log = $3::jsonb, last_error = $4::jsonb, lease_owner = NULL, lease_until = NULL,
                next_attempt_at = NULL, stream_version = stream_version + 1 WHERE delivery_id = $1`,
        [current.delivery_id, attempts, JSON.stringify(log), JSON.stringify(reason)],
      );
      const data: NotificationEventData<'notification.dead_lettered'> = { deliveryId: current.delivery_id, attempts, reason };
      await append('notification.dead_lettered', data);
      return { kind: 'dead', code: reason.code } as const;
    }

    await client.query(
      `UPDATE notifications.deliveries SET attempts = $2, attempt_log = $3::jsonb, backoff_ms = backoff_ms || $4::jsonb, last_error = $5::jsonb,
              next_attempt_at = $6, lease_owner = NULL, lease_until = NULL WHERE delivery_id = $1`,
      [current.delivery_id, attempts, JSON.stringify(log), JSON.stringify([delayMs]), JSON.stringify({ code: outcome.code, message: outcome.message.slice(0, 1000) }), new Date(now.getTime() + delayMs)],
    );
    return { kind: 'retry', delayMs } as const;
  });
}

/** Dead-letters a delivery found past its expiry before another attempt. */
export async function expireDelivery(store: PostgresEventStore, row: DeliveryRow, owner: string): Promise<boolean> {
  return store.transaction(async (client) => {
    const { rows } = await client.query<DeliveryRow>(
      `SELECT * FROM notifications.deliveries WHERE delivery_id = $1 AND lease_owner = $2 AND state = 'pending' FOR UPDATE`,
      [row.delivery_id, owner],
    );
    const current = rows[0];
    if (!current) return false;
    const last = current.last_error ? `; the last: ${current.last_error.code} (${current.last_error.message})` : '';
    const reason = { code: 'expired', message: `not delivered by ${current.expires_at.toISOString()} after ${current.attempts} attempt${current.attempts === 1 ? '' : 's'}${last}`.slice(0, 1000) };
    await client.query(
      `UPDATE notifications.deliveries SET state = 'dead', last_error = $2::jsonb, lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL,
              stream_version = stream_version + 1 WHERE delivery_id = $1`,
      [current.delivery_id, JSON.stringify(reason)],
    );
    const data: NotificationEventData<'notification.dead_lettered'> = { deliveryId: current.delivery_id, attempts: current.attempts, reason };
    await store.append(deliveryStream(current.delivery_id), current.stream_version, [{ type: 'notification.dead_lettered', data, actor: NOTIFICATIONS_ACTOR }], {
      workspaceId: current.workspace_id,
      client,
    });
    return true;
  });
}
