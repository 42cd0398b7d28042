import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { SchedulerCommands } from '@packetagent/contracts';
import { ConcurrencyError, PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { signalChange } from '../../../shared/database';
import { SCHEDULER_OPTIONS, type ResolvedSchedulerOptions } from '../../../scheduler.options';
import { decide, type ExistingTimer } from '../../timer.decider';
import { commitTimerEvents, loadTimerForUpdate, toView } from '../../timer.rows';

export type SetTimerRequest = z.output<typeof SchedulerCommands.setTimer.request>;
export type SetTimerResult = z.input<typeof SchedulerCommands.setTimer.response>;

const ATTEMPTS = 5;

/** Sets or reschedules a durable timer; repeating the same setting changes nothing. */
@Injectable()
export class SetTimer {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    @Inject(SCHEDULER_OPTIONS) private readonly options: ResolvedSchedulerOptions,
  ) {}

  async execute(request: SetTimerRequest): Promise<SetTimerResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.store.transaction(async (client) => {
          const timer = await loadTimerForUpdate(client, request.timerId, request.workspaceId);
          const events = decide({ kind: 'set', workspaceId: request.workspaceId, purpose: request.purpose, dueAt: request.dueAt, payload: request.payload }, timer);
          if (events.length === 0) return { ...toView(timer as ExistingTimer), outcome: 'unchanged' as const };
          const next = await commitTimerEvents(this.store, client, timer, events, request.actor);
          return { ...toView(next), outcome: timer.status === 'absent' ? ('created' as const) : ('rescheduled' as const) };
        });
        if (result.outcome !== 'unchanged') {
          await signalChange(this.pool, this.options.notifyChannel);
        }
        return result;
      } catch (error) {
        // Another replica set the same new timer at the same moment: read it again and decide.
        if (error instanceof ConcurrencyError && attempt < ATTEMPTS) continue;
        throw error;
      }
    }
  }
}
