import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { ConcurrencyError, PostgresEventStore } from '@packetagent/eventstore';
import { inTransactionOn } from '../../../shared/database';
import { SCHEDULER_ACTOR } from '../../../schedules/usecases/fire-due-schedules/fire-due-schedules';
import { decide } from '../../timer.decider';
import { commitTimerEvents, loadTimerForUpdate } from '../../timer.rows';

export interface TimerRoundResult {
  fired: number;
  /** Timers another writer changed first (cancelled, rescheduled, or fired by a deposed leader). */
  conflicts: number;
}

/**
 * Fires due timers, exactly once each: `timer.fired` is appended at the version the locked row
 * holds, in the same transaction that marks the row fired, on the leadership connection (a
 * replica that has lost the lock cannot commit). A conflict means someone else changed the
 * timer first; it is not retried.
 */
@Injectable()
export class FireDueTimers {
  constructor(private readonly store: PostgresEventStore) {}

  async execute(control: PoolClient, now: Date, limit: number, isLeader: () => boolean): Promise<TimerRoundResult> {
    const result: TimerRoundResult = { fired: 0, conflicts: 0 };
    const { rows } = await control.query<{ timer_id: string; workspace_id: string }>(
      `SELECT timer_id, workspace_id FROM scheduler.timers WHERE state = 'pending' AND due_at <= $1 ORDER BY due_at, timer_id LIMIT $2`,
      [now, limit],
    );
    for (const row of rows) {
      if (!isLeader()) break;
      try {
        const fired = await inTransactionOn(control, async (client) => {
          const timer = await loadTimerForUpdate(client, row.timer_id, row.workspace_id);
          const events = decide({ kind: 'fire', now: now.toISOString() }, timer);
          if (events.length === 0) return false;
          await commitTimerEvents(this.store, client, timer, events, SCHEDULER_ACTOR);
          return true;
        });
        if (fired) result.fired++;
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        result.conflicts++;
      }
    }
    if (result.fired > 0) this.store.ringDoorbell();
    return result;
  }
}
