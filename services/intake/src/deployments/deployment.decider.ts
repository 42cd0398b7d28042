import type { EffectiveLimits, IntakeEventData, TriggerBinding } from '@packetagent/contracts';
import { InvalidTransitionError } from '../shared/errors';

export type DeploymentStatus = 'active' | 'paused' | 'revoked';

export interface DeploymentState {
  status: DeploymentStatus;
  statusReason: string | null;
  version: number;
}

export type DeploymentCommand =
  | { type: 'pause'; reason: string | null }
  | { type: 'resume'; releasableRuns: number }
  | { type: 'revoke'; reason: string }
  | { type: 'rollback'; target: VersionTarget }
  | { type: 'update'; target: VersionTarget };

export interface VersionTarget {
  version: number;
  digest: string;
  effectiveDigest: string;
  maxConcurrentRuns: number;
  triggers: TriggerBinding[];
  limits?: EffectiveLimits;
}

export type DeploymentEvent =
  | { type: 'deployment.paused'; data: IntakeEventData<'deployment.paused'> }
  | { type: 'deployment.resumed'; data: IntakeEventData<'deployment.resumed'> }
  | { type: 'deployment.revoked'; data: IntakeEventData<'deployment.revoked'> }
  | { type: 'deployment.rolled_back'; data: IntakeEventData<'deployment.rolled_back'> }
  | { type: 'deployment.updated'; data: IntakeEventData<'deployment.updated'> };

/**
 * Lifecycle of a deployment. Repeating a command that already holds (pause a paused
 * deployment) decides nothing, so retries are harmless; revocation is final.
 */
export function decideDeployment(command: DeploymentCommand, state: DeploymentState): DeploymentEvent[] {
  if (state.status === 'revoked') {
    if (command.type === 'revoke') return [];
    throw new InvalidTransitionError(`the deployment is revoked; it cannot ${command.type}`);
  }
  switch (command.type) {
    case 'pause':
      return state.status === 'paused' ? [] : [{ type: 'deployment.paused', data: { reason: command.reason } }];
    case 'resume':
      return state.status === 'active' ? [] : [{ type: 'deployment.resumed', data: { releasedRuns: command.releasableRuns } }];
    case 'revoke':
      return [{ type: 'deployment.revoked', data: { reason: command.reason } }];
    case 'rollback':
      if (command.target.version === state.version) {
        throw new InvalidTransitionError(`the deployment already runs version ${state.version}`);
      }
      return [{ type: 'deployment.rolled_back', data: { fromVersion: state.version, ...command.target } }];
    case 'update':
      // Repeating an update that already holds decides nothing, so a retried update is harmless.
      if (command.target.version === state.version) return [];
      if (command.target.version < state.version) {
        throw new InvalidTransitionError(`version ${command.target.version} is older than the deployed version ${state.version}; roll back to it instead`);
      }
      return [{ type: 'deployment.updated', data: { fromVersion: state.version, ...command.target } }];
    default: {
      const unreachable: never = command;
      throw new Error(`unhandled command ${JSON.stringify(unreachable)}`);
    }
  }
}

export function evolveDeployment(state: DeploymentState, event: DeploymentEvent): DeploymentState {
  switch (event.type) {
    case 'deployment.paused':
      return { ...state, status: 'paused', statusReason: event.data.reason };
    case 'deployment.resumed':
      return { ...state, status: 'active', statusReason: null };
    case 'deployment.revoked':
      return { ...state, status: 'revoked', statusReason: event.data.reason };
    case 'deployment.rolled_back':
    case 'deployment.updated':
      return { ...state, version: event.data.version };
    default: {
      const unreachable: never = event;
      throw new Error(`unhandled event ${JSON.stringify(unreachable)}`);
    }
  }
}
