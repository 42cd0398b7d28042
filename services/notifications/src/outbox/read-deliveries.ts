import { Inject, Injectable } from '@nestjs/common';
import { deliveryStream, type DeliveryView, type NotificationEventData, type NotificationsCommands } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import type { z } from 'zod';
import { NOTIFICATIONS_OPTIONS, type ResolvedNotificationsOptions } from '../notifications.options';
import { DeliveryNotDeadError, DeliveryNotFoundError } from '../shared/errors';
import { deliveryView, type DeliveryRow } from './delivery.rows';
import { DeliveryDoorbell } from './doorbell';

type ListRequest = z.output<(typeof NotificationsCommands)['listDeliveries']['request']>;
type RedriveRequest = z.output<(typeof NotificationsCommands)['redrive']['request']>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The outbox as operators see it, and redrive: a dead-lettered delivery becomes due again, once. */
@Injectable()
export class Deliveries {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly doorbell: DeliveryDoorbell,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: ResolvedNotificationsOptions,
  ) {}

  async list(request: ListRequest): Promise<{ items: DeliveryView[]; next: string | null }> {
    if (request.after !== null && !UUID.test(request.after)) return { items: [], next: null };
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT * FROM notifications.deliveries
        WHERE workspace_id = $1 AND ($2::text IS NULL OR state = $2) AND ($3::text IS NULL OR run_id = $3) AND ($4::uuid IS NULL OR delivery_id < $4::uuid)
        ORDER BY delivery_id DESC LIMIT $5`,
      [request.workspaceId, request.state, request.runId, request.after, request.limit + 1],
    );
    const items = rows.slice(0, request.limit).map(deliveryView);
    return { items, next: rows.length > request.limit ? items[items.length - 1]!.deliveryId : null };
  }

  async get(workspaceId: string, deliveryId: string): Promise<DeliveryView> {
    if (!UUID.test(deliveryId)) throw new DeliveryNotFoundError(deliveryId);
    const { rows } = await this.pool.query<DeliveryRow>('SELECT * FROM notifications.deliveries WHERE delivery_id = $1 AND workspace_id = $2', [deliveryId, workspaceId]);
    if (!rows[0]) throw new DeliveryNotFoundError(deliveryId);
    return deliveryView(rows[0]);
  }

  async redrive(request: RedriveRequest): Promise<DeliveryView> {
    if (!UUID.test(request.deliveryId)) throw new DeliveryNotFoundError(request.deliveryId);
    const row = await this.store.transaction(async (client) => {
      const { rows } = await client.query<DeliveryRow>('SELECT * FROM notifications.deliveries WHERE delivery_id = $1 AND workspace_id = $2 FOR UPDATE', [
        request.deliveryId,
        request.workspaceId,
      ]);
      const current = rows[0];
      if (!current) throw new DeliveryNotFoundError(request.deliveryId);
      if (current.state !== 'dead') throw new DeliveryNotDeadError(request.deliveryId, current.state);
      const now = this.options.clock();
      const expiresAt = new Date(now.getTime() + 1_000 * this.options.deliveryTtlSeconds);
      const { rows: updated } = await client.query<DeliveryRow>(
        `UPDATE notifications.deliveries SET state = 'pending', next_attempt_at = $2, expires_at = $3, backoff_ms = '[]'::jsonb, lease_owner = NULL, lease_until = NULL,
                stream_version = stream_version + 1 WHERE delivery_id = $1 RETURNING *`,
        [current.delivery_id, now, expiresAt],
      );
      const data: NotificationEventData<'notification.redriven'> = { deliveryId: current.delivery_id, previousAttempts: current.attempts, expiresAt: expiresAt.toISOString() };
      await this.store.append(deliveryStream(current.delivery_id), current.stream_version, [{ type: 'notification.redriven', data, actor: request.actor }], {
        workspaceId: current.workspace_id,
        client,
      });
      return updated[0]!;
    });
    this.doorbell.ring();
    return deliveryView(row);
  }
}
