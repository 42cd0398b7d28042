export { RUN_STATES, isSuccess, isTerminal, type RunState } from '../execution/run-vocabulary';

/** Why a queued run is not yet admitted to execution. */
export const HOLD_REASONS = ['deployment_paused', 'concurrency_limit'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];
