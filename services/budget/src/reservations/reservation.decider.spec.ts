import { ValidationError } from '@packetagent/contracts';
import { ReservationStateError } from '../shared/errors';
import { decide, evolve, type ExistingReservation } from './reservation.decider';

const expiresAt = new Date('2030-01-01T00:10:00.000Z');
const before = new Date('2030-01-01T00:05:00.000Z');
const after = new Date('2030-01-01T00:10:00.000Z');

function held(): ExistingReservation {
  return {
    status: 'held',
    reservationId: 'r1',
    runId: 'run1',
    amounts: [{ unit: 'usd', amount: 1_000 }, { unit: 'count:slack_post', amount: 1 }],
    lines: [
      { scopeRef: 1, scope: { kind: 'run', id: 'run1', unit: 'usd', window: 'run' }, amount: 1_000 },
      { scopeRef: 2, scope: { kind: 'deployment', id: 'd1', unit: 'usd', window: 'day' }, amount: 1_000 },
      { scopeRef: 3, scope: { kind: 'run', id: 'run1', unit: 'count:slack_post', window: 'run' }, amount: 1 },
    ],
    expiresAt,
  };
}

describe('reservation decider', () => {
  it('settles every scope at the actual of its unit when the actual is within the hold', () => {
    const sut = decide({ kind: 'settle', actual: [{ unit: 'usd', amount: 600 }], now: before }, held());

    expect(sut).toEqual([
      {
        type: 'budget.settled',
        data: {
          reservationId: 'r1',
          runId: 'run1',
          actual: [{ unit: 'usd', amount: 600 }, { unit: 'count:slack_post', amount: 0 }],
          scopes: [
            { kind: 'run', id: 'run1', unit: 'usd', window: 'run', held: 1_000, spent: 600 },
            { kind: 'deployment', id: 'd1', unit: 'usd', window: 'day', held: 1_000, spent: 600 },
            { kind: 'run', id: 'run1', unit: 'count:slack_post', window: 'run', held: 1, spent: 0 },
          ],
        },
      },
    ]);
  });

  it('records an overspend and blocks the scopes of that unit when the actual exceeds the hold', () => {
    const sut = decide({ kind: 'settle', actual: [{ unit: 'usd', amount: 1_500 }, { unit: 'count:slack_post', amount: 1 }], now: before }, held());

    expect(sut.map((event) => event.type)).toEqual(['budget.settled', 'budget.overspent']);
    expect(sut[1]!.data).toEqual({
      reservationId: 'r1',
      runId: 'run1',
      unit: 'usd',
      reserved: 1_000,
      actual: 1_500,
      blockedScopes: [
        { kind: 'run', id: 'run1', unit: 'usd', window: 'run' },
        { kind: 'deployment', id: 'd1', unit: 'usd', window: 'day' },
      ],
    });
  });

  it('refuses an actual in a unit that was not reserved', () => {
    expect(() => decide({ kind: 'settle', actual: [{ unit: 'count:email_send', amount: 1 }], now: before }, held())).toThrow(ValidationError);
  });

  it('expires instead when a held reservation is past its TTL, whatever the command', () => {
    for (const command of [{ kind: 'settle' as const, actual: [], now: after }, { kind: 'release' as const, now: after }, { kind: 'expire' as const, now: after }]) {
      expect(decide(command, held()).map((event) => event.type)).toEqual(['budget.expired']);
    }
  });

  it('does not expire a reservation before its TTL', () => {
    expect(decide({ kind: 'expire', now: before }, held())).toEqual([]);
  });

  it('refuses to settle a released, expired or settled reservation', () => {
    for (const status of ['released', 'expired', 'settled'] as const) {
      expect(() => decide({ kind: 'settle', actual: [], now: before }, { ...held(), status, lines: [] })).toThrow(ReservationStateError);
    }
  });

  it('refuses to release a settled reservation and changes nothing when it is released or expired already', () => {
    expect(() => decide({ kind: 'release', now: before }, { ...held(), status: 'settled', lines: [] })).toThrow(ReservationStateError);
    expect(decide({ kind: 'release', now: before }, { ...held(), status: 'released', lines: [] })).toEqual([]);
    expect(decide({ kind: 'expire', now: after }, { ...held(), status: 'released', lines: [] })).toEqual([]);
  });

  it('leaves no live hold after any transition', () => {
    const [released] = decide({ kind: 'release', now: before }, held());
    const sut = evolve(held(), released!);
    expect(sut).toMatchObject({ status: 'released', lines: [] });
  });
});
