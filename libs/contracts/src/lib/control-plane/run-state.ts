/**
 * Run states as the API reports them. Code asks `isSuccess` or `isTerminal`; it never lists
 * failures, so a state added later can never read as a pass.
 */
export const RUN_STATES = [
  'queued',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'abandoned',
  'rejected',
  'expired',
  'revoked',
  'budget_exhausted',
  'timed_out',
] as const;

export type RunState = (typeof RUN_STATES)[number];

const ACTIVE: ReadonlySet<RunState> = new Set(['queued', 'running', 'waiting']);

export function isTerminal(state: RunState): boolean {
  return !ACTIVE.has(state);
}

export function isSuccess(state: RunState): boolean {
  return state === 'succeeded';
}

/** Why a queued run is not yet admitted to execution. */
export const HOLD_REASONS = ['deployment_paused', 'concurrency_limit'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];
