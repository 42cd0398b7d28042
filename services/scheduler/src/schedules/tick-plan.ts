import type { CronSchedule } from '../cron/cron-schedule';

export type MissedPolicy = 'skip' | 'fire_once';

export interface TickPlan {
  /** The scheduled instant to activate now, if any: never more than one per schedule and round. */
  fire: Date | null;
  /** Where next_due_at moves once `fire` (if any) has been accepted by intake. */
  nextDueAt: Date | null;
  /** Why `fire` is null while something was due. */
  dropped: 'late' | 'too_old' | null;
}

export interface TickLimits {
  toleranceMs: number;
  maxCatchUpMs: number;
}

/**
 * What a due schedule does in one round of the leader. Only the most recent due instant is
 * considered; older ones are dropped in every case. `skip` fires it only if it is at most
 * `toleranceMs` late (a tick is on time, not a catch-up); `fire_once` fires it however late,
 * up to `maxCatchUpMs`, so a downtime costs at most one catch-up activation.
 */
export function planTick(
  schedule: CronSchedule,
  state: { nextDueAt: Date; missed: MissedPolicy },
  now: Date,
  limits: TickLimits,
): TickPlan {
  if (state.nextDueAt.getTime() > now.getTime()) return { fire: null, nextDueAt: state.nextDueAt, dropped: null };
  const latest = schedule.latestIn(new Date(state.nextDueAt.getTime() - 1), now);
  const nextDueAt = schedule.nextAfter(now);
  if (!latest) return { fire: null, nextDueAt, dropped: null };
  const lateness = now.getTime() - latest.getTime();
  if (lateness <= limits.toleranceMs) return { fire: latest, nextDueAt, dropped: null };
  if (state.missed === 'skip') return { fire: null, nextDueAt, dropped: 'late' };
  if (lateness <= limits.maxCatchUpMs) return { fire: latest, nextDueAt, dropped: null };
  return { fire: null, nextDueAt, dropped: 'too_old' };
}
