import type { TriggerBinding, ValidationIssue } from '@packetagent/contracts';
import { CronSchedule, InvalidCronError } from '../cron/cron-schedule';
import type { MissedPolicy } from './tick-plan';

export interface DesiredSchedule {
  triggerId: string;
  expression: string;
  timezone: string;
  missed: MissedPolicy;
  /** The first instant after the deployment event: used when the schedule is new or its timing changed. */
  firstDueAt: Date | null;
}

export interface RejectedBinding {
  triggerId: string;
  issues: readonly ValidationIssue[];
}

/**
 * The cron schedules a deployment's trigger set asks for, starting after `since` (when the
 * deployment event happened, so ticks between the event and its processing are not lost).
 * A binding this process cannot evaluate is reported, not scheduled.
 */
export function desiredSchedules(bindings: readonly TriggerBinding[], since: Date): { schedules: DesiredSchedule[]; rejected: RejectedBinding[] } {
  const schedules: DesiredSchedule[] = [];
  const rejected: RejectedBinding[] = [];
  for (const binding of bindings) {
    if (binding.kind !== 'cron') continue;
    if (!binding.cron) {
      rejected.push({ triggerId: binding.triggerId, issues: [{ path: 'cron', message: 'a cron trigger needs an expression' }] });
      continue;
    }
    try {
      const schedule = CronSchedule.parse(binding.cron.expression, binding.cron.timezone);
      schedules.push({
        triggerId: binding.triggerId,
        expression: schedule.expression,
        timezone: schedule.timezone,
        missed: binding.cron.missed,
        firstDueAt: schedule.nextAfter(since),
      });
    } catch (error) {
      if (!(error instanceof InvalidCronError)) throw error;
      rejected.push({ triggerId: binding.triggerId, issues: error.issues });
    }
  }
  return { schedules, rejected };
}
