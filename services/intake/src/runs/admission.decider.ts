import type { HoldReason } from '@packetagent/contracts';
import { DeploymentRevokedError } from '../shared/errors';
import type { DeploymentStatus } from '../deployments/deployment.decider';

export interface AdmissionState {
  deploymentId: string;
  status: DeploymentStatus;
  statusReason: string | null;
  activeRuns: number;
  heldRuns: number;
  maxConcurrentRuns: number;
}

export type AdmissionDecision = { outcome: 'admit' } | { outcome: 'hold'; reason: HoldReason };

/**
 * Whether a new activation runs now. A revoked deployment refuses it; a paused one defers it;
 * beyond the concurrency limit it waits, and so does every activation behind an earlier held
 * one, so held runs are admitted in arrival order.
 */
export function decideAdmission(state: AdmissionState): AdmissionDecision {
  switch (state.status) {
    case 'revoked':
      throw new DeploymentRevokedError(state.deploymentId, state.statusReason);
    case 'paused':
      return { outcome: 'hold', reason: 'deployment_paused' };
    case 'active':
      if (state.heldRuns > 0 || state.activeRuns >= state.maxConcurrentRuns) return { outcome: 'hold', reason: 'concurrency_limit' };
      return { outcome: 'admit' };
    default: {
      const unreachable: never = state.status;
      throw new Error(`unhandled status ${String(unreachable)}`);
    }
  }
}

/** How many held runs may start now. */
export function releasableRuns(state: Pick<AdmissionState, 'activeRuns' | 'heldRuns' | 'maxConcurrentRuns'>): number {
  return Math.max(0, Math.min(state.heldRuns, state.maxConcurrentRuns - state.activeRuns));
}
