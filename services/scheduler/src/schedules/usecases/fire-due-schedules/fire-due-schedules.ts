import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { CommandBus } from '@packetagent/bus';
import { PG_POOL } from '@packetagent/eventstore';
import { DomainError, IntakeCommands, type ActivationResult } from '@packetagent/contracts';
import { CronSchedule, InvalidCronError } from '../../../cron/cron-schedule';
import { SCHEDULER_OPTIONS, type ResolvedSchedulerOptions } from '../../../scheduler.options';
import type { ScheduleRow } from '../../schedule.rows';
import { planTick, type TickPlan } from '../../tick-plan';

export const SCHEDULER_ACTOR = { kind: 'service', id: 'scheduler' } as const;

export interface CronRoundResult {
  fired: number;
  dropped: number;
  /** Activations that failed in a way worth retrying; their schedules stay due. */
  failed: number;
  /** Activations intake refused for good (e.g. the deployment is gone); their instants are done. */
  refused: number;
  lastError: string | null;
}

/** The deterministic key intake dedupes on: the same instant of the same trigger is one activation. */
export function cronDedupeKey(triggerId: string, instant: Date): string {
  return `cron:${triggerId}:${instant.toISOString()}`;
}

/**
 * One round of cron firing by the leader: each due schedule sends at most one activation to
 * intake, and its next_due_at moves only once intake has answered. A failed activation leaves
 * the schedule due for the next round; the dedupe key makes a repeat harmless.
 */
@Injectable()
export class FireDueSchedules {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly commands: CommandBus,
    @Inject(SCHEDULER_OPTIONS) private readonly options: ResolvedSchedulerOptions,
  ) {}

  /**
   * Due schedules are read on `control`, the leadership connection, and `isLeader` is checked
   * before each activation, so a replica that lost the lock sends nothing more. Moving
   * next_due_at is a compare-and-set through the pool instead: an activation intake accepted
   * is recorded even if the lock was lost while waiting for the reply (sparing the next leader
   * a repeat), and it can never undo a newer leader's progress.
   */
  async execute(control: PoolClient, now: Date, isLeader: () => boolean): Promise<CronRoundResult> {
    const result: CronRoundResult = { fired: 0, dropped: 0, failed: 0, refused: 0, lastError: null };
    const { rows } = await control.query<ScheduleRow>(
      `SELECT * FROM scheduler.schedules WHERE active AND next_due_at <= $1 ORDER BY next_due_at, trigger_id LIMIT $2`,
      [now, this.options.batchSize],
    );
    const advances: { row: ScheduleRow; nextDueAt: Date | null; firedAt: Date | null }[] = [];
    await forEachLimited(rows, this.options.fireConcurrency, async (row) => {
      const plan = this.plan(row, now);
      if (!plan.fire) {
        if (plan.dropped) result.dropped++;
        advances.push({ row, nextDueAt: plan.nextDueAt, firedAt: null });
        return;
      }
      if (!isLeader()) return;
      const outcome = await this.activate(row, plan.fire, now);
      if (outcome.kind === 'failed') {
        result.failed++;
        result.lastError = outcome.reason;
        return;
      }
      if (outcome.kind === 'accepted') result.fired++;
      else {
        result.refused++;
        result.lastError = outcome.reason;
      }
      advances.push({ row, nextDueAt: plan.nextDueAt, firedAt: outcome.kind === 'accepted' ? plan.fire : null });
    });
    for (const { row, nextDueAt, firedAt } of advances) {
      await this.pool.query(
        `UPDATE scheduler.schedules
            SET next_due_at = $3, last_fired_at = coalesce($4, last_fired_at), updated_at = now()
          WHERE trigger_id = $1 AND next_due_at = $2 AND active AND expression = $5 AND timezone = $6`,
        [row.trigger_id, row.next_due_at, nextDueAt, firedAt, row.expression, row.timezone],
      );
    }
    return result;
  }

  private plan(row: ScheduleRow, now: Date): TickPlan {
    try {
      return planTick(CronSchedule.parse(row.expression, row.timezone), { nextDueAt: row.next_due_at!, missed: row.missed }, now, {
        toleranceMs: this.options.tickToleranceMs,
        maxCatchUpMs: this.options.maxCatchUpMs,
      });
    } catch (error) {
      if (!(error instanceof InvalidCronError)) throw error;
      // Stored by a process whose runtime knew the zone or pattern; this one cannot evaluate
      // it. It stops being due rather than be picked up (and block a batch) every round.
      this.options.log('error', 'cannot evaluate a stored cron schedule; it will not fire', { triggerId: row.trigger_id, issues: error.issues });
      return { fire: null, nextDueAt: null, dropped: null };
    }
  }

  private async activate(row: ScheduleRow, instant: Date, now: Date): Promise<{ kind: 'accepted' | 'refused' | 'failed'; reason: string | null }> {
    const fields = { triggerId: row.trigger_id, scheduledAt: instant.toISOString() };
    try {
      const reply: ActivationResult = await this.commands.request(
        IntakeCommands.activate,
        {
          workspaceId: row.workspace_id,
          actor: SCHEDULER_ACTOR,
          deploymentId: row.deployment_id,
          triggerId: row.trigger_id,
          source: 'cron',
          dedupeKey: cronDedupeKey(row.trigger_id, instant),
          details: { scheduledAt: instant.toISOString(), firedAt: now.toISOString() },
        },
        { timeoutMs: this.options.activateTimeoutMs },
      );
      this.options.log('info', 'cron activation accepted', { ...fields, runId: reply.runId, duplicate: reply.duplicate });
      return { kind: 'accepted', reason: null };
    } catch (error) {
      const reason = error instanceof DomainError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
      if (error instanceof DomainError && !error.retryable) {
        this.options.log('warn', 'intake refused a cron activation; the instant is done', { ...fields, reason });
        return { kind: 'refused', reason };
      }
      this.options.log('warn', 'cron activation failed; will retry', { ...fields, reason });
      return { kind: 'failed', reason };
    }
  }
}

async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(workers);
}
