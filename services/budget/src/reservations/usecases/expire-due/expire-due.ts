import { Inject, Injectable } from '@nestjs/common';
import { PostgresEventStore } from '@packetagent/eventstore';
import { BUDGET_OPTIONS, type ResolvedBudgetOptions } from '../../../budget.options';
import { databaseNow } from '../../ledger';
import { decide } from '../../reservation.decider';
import { commitReservationEvents, loadReservationForUpdate } from '../../reservation.rows';

const SWEEPER = { kind: 'system', id: 'budget-sweeper' } as const;

/**
 * Expires held reservations past their TTL. Every replica may sweep at once: each reservation
 * row is taken with SKIP LOCKED and its state decided under that lock, so a hold is expired
 * exactly once and never after it was settled or released.
 */
@Injectable()
export class ExpireDueReservations {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(BUDGET_OPTIONS) private readonly options: ResolvedBudgetOptions,
  ) {}

  /** Expires one batch; returns how many expired. */
  async execute(): Promise<number> {
    return this.store.transaction(async (client) => {
      const { rows } = await client.query<{ reservation_id: string }>(
        `SELECT reservation_id FROM budget.reservations
          WHERE state = 'held' AND expires_at <= clock_timestamp()
          ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.options.sweepBatchSize],
      );
      let expired = 0;
      for (const { reservation_id: reservationId } of rows) {
        const reservation = await loadReservationForUpdate(client, reservationId, null);
        if (!reservation) continue;
        const now = await databaseNow(client);
        const events = decide({ kind: 'expire', now: new Date(now) }, reservation);
        await commitReservationEvents(client, this.store, reservation, events, { now, actor: SWEEPER });
        expired += events.length;
      }
      return expired;
    });
  }
}
