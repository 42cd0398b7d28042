import { z } from 'zod';
import type { EventRegistry } from '../registry';

/**
 * A timer id is also the id part of its stream (`timer-<timerId>`), so it follows the stream
 * id grammar. Callers choose it (e.g. `approval-<attentionId>`), which makes setting a timer
 * naturally idempotent.
 */
export const TimerIdSchema = z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/, 'letters, digits, _ : @ - (1-200)');

/** What the timer is for, e.g. `approval_deadline`, `run_wall_time`, `retry`; consumers route on it. */
export const TimerPurposeSchema = z.string().regex(/^[a-z][a-z0-9_.-]{0,63}$/, 'lower-case letters, digits, _ . - (1-64), starting with a letter');

export const TimerStateSchema = z.enum(['pending', 'fired', 'cancelled']);
export type TimerState = z.infer<typeof TimerStateSchema>;

export const TIMER_STREAM_CATEGORY = 'timer';

export function timerStream(timerId: string): string {
  return `${TIMER_STREAM_CATEGORY}-${timerId}`;
}

/**
 * Set or rescheduled. The payload travels back in `timer.fired`; it is stored in events, so it
 * must never carry a secret.
 */
export const TimerSetV1 = z.object({
  timerId: TimerIdSchema,
  purpose: TimerPurposeSchema,
  dueAt: z.iso.datetime(),
  payload: z.json(),
});
export const TimerCancelledV1 = z.object({
  timerId: TimerIdSchema,
  purpose: TimerPurposeSchema,
  reason: z.string().max(500).nullable(),
});
export const TimerFiredV1 = z.object({
  timerId: TimerIdSchema,
  purpose: TimerPurposeSchema,
  dueAt: z.iso.datetime(),
  firedAt: z.iso.datetime(),
  payload: z.json(),
});

export const SchedulerEvents = {
  'timer.set': TimerSetV1,
  'timer.cancelled': TimerCancelledV1,
  'timer.fired': TimerFiredV1,
} as const;

export type SchedulerEventType = keyof typeof SchedulerEvents;
export type SchedulerEventData<T extends SchedulerEventType> = z.infer<(typeof SchedulerEvents)[T]>;

export function registerSchedulerEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(SchedulerEvents);
}
