import { canonicalJson, type JsonValue, type SchedulerEventData, type TimerState } from '@packetagent/contracts';
import { TimerConflictError, TimerNotFoundError, TimerNotPendingError } from './timer.errors';

/** A timer as its stream folds: `absent` until its first `timer.set`. */
export type Timer =
  | { status: 'absent'; timerId: string; workspaceId: string; version: 0 }
  | {
      status: TimerState;
      timerId: string;
      workspaceId: string;
      purpose: string;
      /** ISO instant, millisecond precision. */
      dueAt: string;
      payload: JsonValue;
      firedAt: string | null;
      version: number;
    };

export type ExistingTimer = Exclude<Timer, { status: 'absent' }>;

export type TimerCommand =
  | { kind: 'set'; workspaceId: string; purpose: string; dueAt: string; payload: JsonValue }
  | { kind: 'cancel'; workspaceId: string; reason: string | null }
  | { kind: 'fire'; now: string };

export type TimerEvent =
  | { type: 'timer.set'; data: SchedulerEventData<'timer.set'> }
  | { type: 'timer.cancelled'; data: SchedulerEventData<'timer.cancelled'> }
  | { type: 'timer.fired'; data: SchedulerEventData<'timer.fired'> };

export function initialTimer(timerId: string, workspaceId: string): Timer {
  return { status: 'absent', timerId, workspaceId, version: 0 };
}

/** Normalises an ISO instant so equal instants compare equal as text. */
export function isoInstant(value: string | Date): string {
  return new Date(value).toISOString();
}

function sameSetting(timer: ExistingTimer, command: { dueAt: string; payload: JsonValue }): boolean {
  return timer.dueAt === isoInstant(command.dueAt) && canonicalJson(timer.payload) === canonicalJson(command.payload);
}

export function decide(command: TimerCommand, timer: Timer): TimerEvent[] {
  switch (command.kind) {
    case 'set': {
      const data = { timerId: timer.timerId, purpose: command.purpose, dueAt: isoInstant(command.dueAt), payload: command.payload };
      if (timer.status === 'absent') return [{ type: 'timer.set', data }];
      if (timer.workspaceId !== command.workspaceId || timer.purpose !== command.purpose) throw new TimerConflictError(timer.timerId);
      if (sameSetting(timer, command)) return [];
      if (timer.status !== 'pending') throw new TimerNotPendingError(timer.timerId, timer.status);
      return [{ type: 'timer.set', data }];
    }
    case 'cancel': {
      if (timer.status === 'absent' || timer.workspaceId !== command.workspaceId) throw new TimerNotFoundError(timer.timerId);
      if (timer.status !== 'pending') return [];
      return [{ type: 'timer.cancelled', data: { timerId: timer.timerId, purpose: timer.purpose, reason: command.reason } }];
    }
    case 'fire': {
      if (timer.status !== 'pending' || Date.parse(timer.dueAt) > Date.parse(command.now)) return [];
      return [
        {
          type: 'timer.fired',
          data: { timerId: timer.timerId, purpose: timer.purpose, dueAt: timer.dueAt, firedAt: isoInstant(command.now), payload: timer.payload },
        },
      ];
    }
    default:
      return unreachable(command);
  }
}

export function evolve(timer: Timer, event: TimerEvent): ExistingTimer {
  const version = timer.version + 1;
  switch (event.type) {
    case 'timer.set':
      return {
        status: 'pending',
        timerId: timer.timerId,
        workspaceId: timer.workspaceId,
        purpose: event.data.purpose,
        dueAt: isoInstant(event.data.dueAt),
        payload: event.data.payload,
        firedAt: null,
        version,
      };
    case 'timer.cancelled':
      return { ...existing(timer, event.type), status: 'cancelled', version };
    case 'timer.fired':
      return { ...existing(timer, event.type), status: 'fired', firedAt: isoInstant(event.data.firedAt), version };
    default:
      return unreachable(event);
  }
}

function existing(timer: Timer, type: string): ExistingTimer {
  if (timer.status === 'absent') throw new Error(`${type} on a timer that was never set`);
  return timer;
}

function unreachable(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}
