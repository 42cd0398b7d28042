import { decide, evolve, initialTimer, type Timer, type TimerEvent } from './timer.decider';
import { TimerConflictError, TimerNotFoundError, TimerNotPendingError } from './timer.errors';

const setting = { kind: 'set', workspaceId: 'ws1', purpose: 'approval_deadline', dueAt: '2026-06-01T10:00:00Z', payload: { attentionId: 'a1' } } as const;

function given(...events: TimerEvent[]): Timer {
  return events.reduce<Timer>((timer, event) => evolve(timer, event), initialTimer('approval-a1', 'ws1'));
}

const set = (dueAt = '2026-06-01T10:00:00.000Z'): TimerEvent => ({
  type: 'timer.set',
  data: { timerId: 'approval-a1', purpose: 'approval_deadline', dueAt, payload: { attentionId: 'a1' } },
});
const fired: TimerEvent = {
  type: 'timer.fired',
  data: { timerId: 'approval-a1', purpose: 'approval_deadline', dueAt: '2026-06-01T10:00:00.000Z', firedAt: '2026-06-01T10:00:00.300Z', payload: { attentionId: 'a1' } },
};
const cancelled: TimerEvent = { type: 'timer.cancelled', data: { timerId: 'approval-a1', purpose: 'approval_deadline', reason: 'approved' } };

describe('timer decider', () => {
  describe('set', () => {
    it('sets a new timer, its due time normalised', () => {
      expect(decide(setting, given())).toEqual([set()]);
    });

    it('changes nothing when the same setting comes again, whatever the state', () => {
      expect(decide(setting, given(set()))).toEqual([]);
      expect(decide({ ...setting, dueAt: '2026-06-01T10:00:00.000+00:00' }, given(set()))).toEqual([]);
      expect(decide(setting, given(set(), fired))).toEqual([]);
      expect(decide(setting, given(set(), cancelled))).toEqual([]);
    });

    it('reschedules a pending timer to a different due time', () => {
      expect(decide({ ...setting, dueAt: '2026-06-01T11:00:00Z' }, given(set()))).toEqual([set('2026-06-01T11:00:00.000Z')]);
    });

    it('refuses to reschedule a timer that fired or was cancelled', () => {
      expect(() => decide({ ...setting, dueAt: '2026-06-01T11:00:00Z' }, given(set(), fired))).toThrow(TimerNotPendingError);
      expect(() => decide({ ...setting, dueAt: '2026-06-01T11:00:00Z' }, given(set(), cancelled))).toThrow(TimerNotPendingError);
    });

    it('refuses an id taken by another purpose or workspace', () => {
      expect(() => decide({ ...setting, purpose: 'run_wall_time' }, given(set()))).toThrow(TimerConflictError);
      expect(() => decide({ ...setting, workspaceId: 'ws2' }, given(set()))).toThrow(TimerConflictError);
    });
  });

  describe('cancel', () => {
    it('cancels a pending timer', () => {
      expect(decide({ kind: 'cancel', workspaceId: 'ws1', reason: 'approved' }, given(set()))).toEqual([cancelled]);
    });

    it('changes nothing for a timer that fired or was cancelled', () => {
      expect(decide({ kind: 'cancel', workspaceId: 'ws1', reason: null }, given(set(), fired))).toEqual([]);
      expect(decide({ kind: 'cancel', workspaceId: 'ws1', reason: null }, given(set(), cancelled))).toEqual([]);
    });

    it('does not find a timer never set or of another workspace', () => {
      expect(() => decide({ kind: 'cancel', workspaceId: 'ws1', reason: null }, given())).toThrow(TimerNotFoundError);
      expect(() => decide({ kind: 'cancel', workspaceId: 'ws2', reason: null }, given(set()))).toThrow(TimerNotFoundError);
    });
  });

  describe('fire', () => {
    it('fires a pending timer once it is due, carrying its payload', () => {
      expect(decide({ kind: 'fire', now: '2026-06-01T10:00:00.300Z' }, given(set()))).toEqual([fired]);
    });

    it('does not fire before the due time, twice, or after a cancel', () => {
      expect(decide({ kind: 'fire', now: '2026-06-01T09:59:59.999Z' }, given(set()))).toEqual([]);
      expect(decide({ kind: 'fire', now: '2026-06-01T10:00:01Z' }, given(set(), fired))).toEqual([]);
      expect(decide({ kind: 'fire', now: '2026-06-01T10:00:01Z' }, given(set(), cancelled))).toEqual([]);
    });
  });

  it('folds events into the state and the stream version', () => {
    expect(given(set(), fired)).toEqual({
      status: 'fired', timerId: 'approval-a1', workspaceId: 'ws1', purpose: 'approval_deadline',
      dueAt: '2026-06-01T10:00:00.000Z', payload: { attentionId: 'a1' }, firedAt: '2026-06-01T10:00:00.300Z', version: 2,
    });
  });
});
