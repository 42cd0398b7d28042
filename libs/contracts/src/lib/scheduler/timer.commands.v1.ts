import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { TimerIdSchema, TimerPurposeSchema, TimerStateSchema } from './timer.events.v1';

const workspaceId = z.string().regex(Identifiers.workspace);

export const TimerSchema = z.object({
  timerId: TimerIdSchema,
  workspaceId,
  purpose: TimerPurposeSchema,
  dueAt: z.iso.datetime(),
  state: TimerStateSchema,
  payload: z.json(),
  firedAt: z.iso.datetime().nullable(),
  /** Version of the timer's stream: the number of events it holds. */
  version: z.number().int().positive(),
});
export type TimerView = z.infer<typeof TimerSchema>;

/** Codes of the errors the scheduler's timer commands answer with. */
export const TimerErrorCodes = {
  notFound: 'not_found',
  /** The timer already fired or was cancelled and the request asks for something else. */
  notPending: 'timer_not_pending',
  /** The id is taken by a timer with another purpose or in another workspace. */
  conflict: 'timer_conflict',
} as const;

export const SchedulerCommands = {
  /**
   * Idempotent by timer id: the same due time (and payload) again changes nothing; a different
   * one reschedules a pending timer. Setting a fired or cancelled timer to something else is refused.
   */
  setTimer: defineCommand(
    'scheduler.timers.set',
    z.object({
      workspaceId,
      timerId: TimerIdSchema,
      purpose: TimerPurposeSchema,
      dueAt: z.iso.datetime(),
      payload: z.json().default(null),
      actor: ActorSchema,
    }),
    TimerSchema.extend({ outcome: z.enum(['created', 'rescheduled', 'unchanged']) }),
  ),
  /** Cancelling a timer that already fired or was cancelled changes nothing; the reply says which. */
  cancelTimer: defineCommand(
    'scheduler.timers.cancel',
    z.object({
      workspaceId,
      timerId: TimerIdSchema,
      reason: z.string().max(500).nullable().default(null),
      actor: ActorSchema,
    }),
    TimerSchema.extend({ outcome: z.enum(['cancelled', 'unchanged']) }),
  ),
  getTimer: defineCommand('scheduler.timers.get', z.object({ workspaceId, timerId: TimerIdSchema }), TimerSchema),
} as const;
