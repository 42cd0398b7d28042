/** Display helpers shared by every page; pure, so they are unit tested without a browser. */

import { isRunState, isSuccess, isTerminal } from './run-vocabulary';

export type Tone = 'ok' | 'warn' | 'bad' | 'neutral';

/** A run state's colour: success is ok, waiting warns, other active states are neutral, and any other state is bad. */
export function runStateTone(state: string): Tone {
  if (!isActiveRunState(state)) return isRunState(state) && isSuccess(state) ? 'ok' : 'bad';
  return state === 'waiting' ? 'warn' : 'neutral';
}

/** A state the console does not know is not active: it may be one the API added since. */
export function isActiveRunState(state: string): boolean {
  return isRunState(state) && !isTerminal(state);
}

export function formatUsd(amount: number | null | undefined): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return '—';
  // Model turns cost fractions of a cent: show them rather than rounding to $0.00.
  const digits = Math.abs(amount) > 0 && Math.abs(amount) < 0.01 ? 6 : 2;
  return `$${amount.toFixed(digits)}`;
}

/** Budget amounts are integers: micro-dollars for the `usd` unit, a count for `count:<tool>`. */
export function formatBudgetAmount(unit: string, amount: number): string {
  return unit === 'usd' ? formatUsd(amount / 1_000_000) : `${amount} ${amount === 1 ? 'call' : 'calls'}`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** "2m 05s left", "overdue 10s": a deadline relative to now. */
export function countdown(deadlineIso: string, nowMs: number): { text: string; overdue: boolean } {
  const remainingMs = Date.parse(deadlineIso) - nowMs;
  if (Number.isNaN(remainingMs)) return { text: 'no deadline', overdue: false };
  const overdue = remainingMs < 0;
  let seconds = Math.floor(Math.abs(remainingMs) / 1000);
  const days = Math.floor(seconds / 86_400);
  seconds -= days * 86_400;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  const parts = days > 0 ? [`${days}d`, `${hours}h`] : hours > 0 ? [`${hours}h`, `${String(minutes).padStart(2, '0')}m`] : [`${minutes}m`, `${String(seconds).padStart(2, '0')}s`];
  return { text: overdue ? `overdue by ${parts.join(' ')}` : `${parts.join(' ')} left`, overdue };
}

/** Pretty JSON for display; `undefined` (absent) shows as nothing rather than "undefined". */
export function prettyJson(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

/** A random idempotency key; getRandomValues works on plain-HTTP origins, where randomUUID does not exist. */
export function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
