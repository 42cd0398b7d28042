import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { SchedulerCommands } from '@packetagent/contracts';
import { ConcurrencyError, PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { decide, type ExistingTimer } from '../../timer.decider';
import { commitTimerEvents, loadTimerForUpdate, toView } from '../../timer.rows';

export type CancelTimerRequest = z.output<typeof SchedulerCommands.cancelTimer.request>;
export type CancelTimerResult = z.input<typeof SchedulerCommands.cancelTimer.response>;

const ATTEMPTS = 5;

/**
 * Cancels a pending timer. The row lock and the expected stream version order it against the
 * leader firing the same timer: whichever commits first wins, and a cancelled timer never fires.
 */
@Injectable()
export class CancelTimer {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
  ) {}

  async execute(request: CancelTimerRequest): Promise<CancelTimerResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.store.transaction(async (client) => {
          const timer = await loadTimerForUpdate(client, request.timerId, request.workspaceId);
          const events = decide({ kind: 'cancel', workspaceId: request.workspaceId, reason: request.reason }, timer);
          if (events.length === 0) return { ...toView(timer as ExistingTimer), outcome: 'unchanged' as const };
          const next = await commitTimerEvents(this.store, client, timer, events, request.actor);
          return { ...toView(next), outcome: 'cancelled' as const };
        });
        return result;
      } catch (error) {
        if (error instanceof ConcurrencyError && attempt < ATTEMPTS) continue;
        throw error;
      }
    }
  }
}
