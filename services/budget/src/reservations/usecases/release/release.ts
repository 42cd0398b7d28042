import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { BudgetCommands } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { ReservationNotFoundError } from '../../../shared/errors';
import { databaseNow } from '../../ledger';
import { decide } from '../../reservation.decider';
import { commitReservationEvents, loadReservationForUpdate } from '../../reservation.rows';

export type ReleaseRequest = z.output<typeof BudgetCommands.release.request>;
export type ReleaseResult = z.input<typeof BudgetCommands.release.response>;

/** Frees a hold. Freeing only lowers spent + held, so the scope rows need no lock. */
@Injectable()
export class Release {
  constructor(private readonly store: PostgresEventStore) {}

  async execute(request: ReleaseRequest): Promise<ReleaseResult> {
    return this.store.transaction(async (client) => {
      const reservation = await loadReservationForUpdate(client, request.reservationId, request.workspaceId);
      if (!reservation) throw new ReservationNotFoundError(request.reservationId);
      const now = await databaseNow(client);
      const events = decide({ kind: 'release', now: new Date(now) }, reservation);
      const next = await commitReservationEvents(client, this.store, reservation, events, { now, actor: request.actor });
      const state = next.status === 'expired' ? 'expired' : 'released';
      return { reservationId: request.reservationId, state, outcome: events.some((event) => event.type === 'budget.released') ? 'released' : 'unchanged' };
    });
  }
}
