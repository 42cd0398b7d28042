import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PG_POOL } from '@packetagent/eventstore';
import type { Pool } from 'pg';

export const DELIVERIES_CHANNEL = 'pa_notifications_due';

/**
 * Rung after a commit that queued or redrove deliveries: wakes this replica's sender at once
 * and the others through NOTIFY (sent outside the queuing transaction, which would otherwise
 * take Postgres' global notify lock at commit).
 */
@Injectable()
export class DeliveryDoorbell implements OnModuleDestroy {
  private readonly listeners = new Set<() => void>();
  private closed = false;

  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  onRing(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ring(): void {
    for (const listener of this.listeners) listener();
    if (this.closed) return;
    this.pool.query('SELECT pg_notify($1, $2)', [DELIVERIES_CHANNEL, '']).catch(() => undefined);
  }

  onModuleDestroy(): void {
    this.closed = true;
  }
}
