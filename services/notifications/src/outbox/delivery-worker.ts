import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { NOTIFICATIONS_OPTIONS, type ResolvedNotificationsOptions } from '../notifications.options';
import { claimDueDeliveries, nextDueAt, releaseLease } from './claim-deliveries';
import type { DeliveryRow } from './delivery.rows';
import { DELIVERIES_CHANNEL, DeliveryDoorbell } from './doorbell';
import { expireDelivery, recordAttempt } from './record-attempt';
import { SendDelivery } from './send-delivery';

/**
 * Sends what is due, under leases, at most `concurrency` at once. Woken by the doorbell (this
 * replica's and the others' NOTIFY), by the next retry falling due, and by a poll. Stopping
 * aborts the attempts in hand and gives their leases back.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly owner = `notifications-${uuidv7()}`;
  private readonly inFlight = new Map<string, { done: Promise<void>; abort: AbortController }>();
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private listener: PoolClient | null = null;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly store: PostgresEventStore,
    private readonly sender: SendDelivery,
    private readonly doorbell: DeliveryDoorbell,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: ResolvedNotificationsOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.deliver) return;
    this.stopped = false;
    this.unsubscribe = this.doorbell.onRing(() => this.wake());
    void this.listen();
    this.wake();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    for (const { abort } of this.inFlight.values()) abort.abort();
    await Promise.allSettled([...this.inFlight.values()].map(({ done }) => done));
    await this.ticking?.catch(() => undefined);
    const listener = this.listener;
    this.listener = null;
    if (listener) {
      await listener.query(`UNLISTEN ${DELIVERIES_CHANNEL}`).catch(() => undefined);
      listener.release();
    }
  }

  /** Sends what is due now; coalesces wake-ups that arrive while a pass runs. */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((error: unknown) => this.options.log('warn', 'notification delivery pass failed', { error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        this.ticking = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async tick(): Promise<void> {
    const room = this.options.concurrency - this.inFlight.size;
    if (room > 0) {
      const rows = await claimDueDeliveries(this.pool, { owner: this.owner, limit: room, now: this.options.clock(), leaseMs: this.options.leaseMs });
      for (const row of rows) this.start(row);
      if (rows.length === room) this.again = true;
    }
    await this.schedule();
  }

  private start(row: DeliveryRow): void {
    const abort = new AbortController();
    const done = this.attempt(row, abort.signal)
      .catch((error: unknown) => this.options.log('warn', 'notification attempt failed to record', { deliveryId: row.delivery_id, error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        this.inFlight.delete(row.delivery_id);
        this.wake();
      });
    this.inFlight.set(row.delivery_id, { done, abort });
  }

  private async attempt(row: DeliveryRow, signal: AbortSignal): Promise<void> {
    const startedAt = this.options.clock();
    if (startedAt.getTime() >= row.expires_at.getTime()) {
      await expireDelivery(this.store, row, this.owner);
      return;
    }
    let outcome;
    try {
      outcome = await this.sender.send(row, AbortSignal.any([signal, AbortSignal.timeout(this.options.attemptTimeoutMs)]));
    } catch (error) {
      if (signal.aborted) {
        await releaseLease(this.pool, row.delivery_id, this.owner).catch(() => undefined);
        return;
      }
      throw error;
    }
    if (signal.aborted && !outcome.ok) {
      await releaseLease(this.pool, row.delivery_id, this.owner).catch(() => undefined);
      return;
    }
    const result = await recordAttempt(this.store, {
      row,
      owner: this.owner,
      outcome,
      startedAt,
      now: this.options.clock(),
      policy: { baseMs: this.options.retryBaseMs, maxMs: this.options.retryMaxMs },
      random: this.options.random,
    });
    if (result.kind === 'dead') this.options.log('warn', 'notification dead-lettered', { deliveryId: row.delivery_id, code: result.code });
  }

  /** Wakes again when the next retry or lease falls due, or after the poll interval, whichever is first. */
  private async schedule(): Promise<void> {
    if (this.stopped) return;
    const due = await nextDueAt(this.pool);
    const untilDue = due ? Math.max(0, due.getTime() - this.options.clock().getTime()) : this.options.pollMs;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), Math.min(untilDue + 5, this.options.pollMs));
    this.timer.unref();
  }

  private async listen(): Promise<void> {
    try {
      const client = await this.pool.connect();
      if (this.stopped) {
        client.release();
        return;
      }
      client.on('notification', () => this.wake());
      client.on('error', () => {
        if (this.listener === client) this.listener = null;
        client.release(true);
        if (!this.stopped) setTimeout(() => void this.listen(), this.options.pollMs).unref();
      });
      await client.query(`LISTEN ${DELIVERIES_CHANNEL}`);
      this.listener = client;
    } catch (error) {
      // Without LISTEN the poll still finds what other replicas queued, a little later.
      this.options.log('warn', 'notifications could not LISTEN for new deliveries', { error: error instanceof Error ? error.message : String(error) });
      if (!this.stopped) setTimeout(() => void this.listen(), this.options.pollMs).unref();
    }
  }
}
