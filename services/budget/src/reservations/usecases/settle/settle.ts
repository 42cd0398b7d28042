import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { BudgetCommands, BudgetScope } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { BUDGET_OPTIONS, type ResolvedBudgetOptions } from '../../../budget.options';
import { ReservationNotFoundError, ReservationStateError } from '../../../shared/errors';
import { databaseNow, lockScopes, readUsage, warnOnThreshold } from '../../ledger';
import { decide } from '../../reservation.decider';
import { commitReservationEvents, loadReservationForUpdate } from '../../reservation.rows';

export type SettleRequest = z.output<typeof BudgetCommands.settle.request>;
export type SettleResult = z.input<typeof BudgetCommands.settle.response>;

/**
 * Moves a hold to spend at the actual amounts. The reservation row is locked first, then its
 * scopes (in the same order reservations lock them), and the TTL is judged on the clock read
 * under those locks: a hold that a concurrent reservation already treated as expired can not
 * turn into spend afterwards.
 */
@Injectable()
export class Settle {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(BUDGET_OPTIONS) private readonly options: ResolvedBudgetOptions,
  ) {}

  async execute(request: SettleRequest): Promise<SettleResult> {
    const outcome = await this.store.transaction(async (client) => {
      const reservation = await loadReservationForUpdate(client, request.reservationId, request.workspaceId);
      if (!reservation) throw new ReservationNotFoundError(request.reservationId);
      const scopes = await lockScopes(client, reservation.lines.map((line) => line.scopeRef));
      const now = await databaseNow(client);
      const events = decide({ kind: 'settle', actual: request.actual, now: new Date(now) }, reservation);
      await commitReservationEvents(client, this.store, reservation, events, { now, actor: request.actor });
      const blockedScopes: BudgetScope[] = [];
      for (const event of events) if (event.type === 'budget.overspent') blockedScopes.push(...event.data.blockedScopes);
      if (blockedScopes.length) {
        // Only an overspend can raise spent + held: a settlement within its hold lowers it.
        const usage = await readUsage(client, scopes.map((scope) => scope.scopeRef), now);
        await warnOnThreshold(client, this.store, { scopes, usage, now, percent: this.options.warningPercent, reservationId: reservation.reservationId, actor: request.actor });
      }
      return { expired: events.some((event) => event.type === 'budget.expired'), blockedScopes };
    });
    // The expiry is committed; the settlement it pre-empted is refused.
    if (outcome.expired) throw new ReservationStateError(request.reservationId, 'expired', 'settle');
    return { reservationId: request.reservationId, state: 'settled', overspent: outcome.blockedScopes.length > 0, blockedScopes: outcome.blockedScopes };
  }
}
