import {
  ValidationError,
  type BudgetAmount,
  type BudgetEventData,
  type BudgetScope,
  type ReservationState,
} from '@packetagent/contracts';
import { ReservationStateError } from '../shared/errors';

/** The reservation's hold in one scope. */
export interface HoldLine {
  scopeRef: number;
  scope: BudgetScope;
  amount: number;
}

export interface ExistingReservation {
  status: ReservationState;
  reservationId: string;
  runId: string;
  amounts: BudgetAmount[];
  /** Live holds; empty once the reservation left `held`. */
  lines: HoldLine[];
  expiresAt: Date;
}

export type Reservation = { status: 'absent' } | ExistingReservation;

export type ReservationCommand =
  | { kind: 'settle'; actual: BudgetAmount[]; now: Date }
  | { kind: 'release'; now: Date }
  | { kind: 'expire'; now: Date };

export type ReservationEvent =
  | { type: 'budget.settled'; data: BudgetEventData<'budget.settled'> }
  | { type: 'budget.overspent'; data: BudgetEventData<'budget.overspent'> }
  | { type: 'budget.released'; data: BudgetEventData<'budget.released'> }
  | { type: 'budget.expired'; data: BudgetEventData<'budget.expired'> };

function scopeAmounts(lines: HoldLine[]): BudgetEventData<'budget.released'>['scopes'] {
  return lines.map((line) => ({ ...line.scope, amount: line.amount }));
}

function expired(state: ExistingReservation): ReservationEvent {
  return {
    type: 'budget.expired',
    data: { reservationId: state.reservationId, runId: state.runId, scopes: scopeAmounts(state.lines), expiresAt: state.expiresAt.toISOString() },
  };
}

/**
 * What a command does to a reservation. A hold moves exactly once: to spend (settled), back
 * (released) or back by its TTL (expired). A command reaching a held reservation past its TTL
 * expires it instead, whichever replica's sweeper has not got to it yet.
 */
export function decide(command: ReservationCommand, state: ExistingReservation): ReservationEvent[] {
  const due = state.status === 'held' && command.now.getTime() >= state.expiresAt.getTime();
  switch (command.kind) {
    case 'expire':
      return due ? [expired(state)] : [];
    case 'release':
      if (due) return [expired(state)];
      if (state.status === 'held') {
        return [{ type: 'budget.released', data: { reservationId: state.reservationId, runId: state.runId, scopes: scopeAmounts(state.lines) } }];
      }
      if (state.status === 'settled') throw new ReservationStateError(state.reservationId, state.status, 'release');
      return [];
    case 'settle':
      if (due) return [expired(state)];
      if (state.status !== 'held') throw new ReservationStateError(state.reservationId, state.status, 'settle');
      return settle(state, command.actual);
    default: {
      const unknown: never = command;
      throw new Error(`unknown reservation command ${JSON.stringify(unknown)}`);
    }
  }
}

function settle(state: ExistingReservation, actual: BudgetAmount[]): ReservationEvent[] {
  const reserved = new Map(state.amounts.map((entry) => [entry.unit, entry.amount]));
  const stray = actual.filter((entry) => !reserved.has(entry.unit));
  if (stray.length) {
    throw new ValidationError(
      'invalid settlement',
      stray.map((entry) => ({ path: `actual.${actual.indexOf(entry)}.unit`, message: `${entry.unit} was not reserved` })),
    );
  }
  const spentByUnit = new Map(actual.map((entry) => [entry.unit, entry.amount]));
  const events: ReservationEvent[] = [
    {
      type: 'budget.settled',
      data: {
        reservationId: state.reservationId,
        runId: state.runId,
        actual: state.amounts.map((entry) => ({ unit: entry.unit, amount: spentByUnit.get(entry.unit) ?? 0 })),
        scopes: state.lines.map((line) => ({ ...line.scope, held: line.amount, spent: spentByUnit.get(line.scope.unit) ?? 0 })),
      },
    },
  ];
  for (const entry of state.amounts) {
    const spent = spentByUnit.get(entry.unit) ?? 0;
    if (spent <= entry.amount) continue;
    events.push({
      type: 'budget.overspent',
      data: {
        reservationId: state.reservationId,
        runId: state.runId,
        unit: entry.unit,
        reserved: entry.amount,
        actual: spent,
        blockedScopes: state.lines.filter((line) => line.scope.unit === entry.unit).map((line) => line.scope),
      },
    });
  }
  return events;
}

export function evolve(state: ExistingReservation, event: ReservationEvent): ExistingReservation {
  switch (event.type) {
    case 'budget.settled':
      return { ...state, status: 'settled', lines: [] };
    case 'budget.released':
      return { ...state, status: 'released', lines: [] };
    case 'budget.expired':
      return { ...state, status: 'expired', lines: [] };
    case 'budget.overspent':
      return state;
    default: {
      const unknown: never = event;
      throw new Error(`unknown reservation event ${JSON.stringify(unknown)}`);
    }
  }
}
