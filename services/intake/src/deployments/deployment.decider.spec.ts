import { InvalidTransitionError } from '../shared/errors';
import { decideDeployment, evolveDeployment, type DeploymentCommand, type DeploymentState } from './deployment.decider';

const active: DeploymentState = { status: 'active', statusReason: null, version: 2 };
const target = { version: 1, digest: 'a'.repeat(64), effectiveDigest: 'b'.repeat(64), maxConcurrentRuns: 3, triggers: [] };

function given(state: DeploymentState) {
  return {
    when: (command: DeploymentCommand) => ({
      then: (expected: unknown) => expect(decideDeployment(command, state)).toEqual(expected),
      thenRefuses: (message: RegExp) => {
        expect(() => decideDeployment(command, state)).toThrow(InvalidTransitionError);
        expect(() => decideDeployment(command, state)).toThrow(message);
      },
    }),
  };
}

describe('decideDeployment', () => {
  it('pauses an active deployment with the reason', () =>
    given(active).when({ type: 'pause', reason: 'maintenance' }).then([{ type: 'deployment.paused', data: { reason: 'maintenance' } }]));

  it('decides nothing when pausing a paused deployment', () =>
    given({ ...active, status: 'paused' }).when({ type: 'pause', reason: null }).then([]));

  it('resumes a paused deployment, recording how many held runs it releases', () =>
    given({ ...active, status: 'paused' })
      .when({ type: 'resume', releasableRuns: 2 })
      .then([{ type: 'deployment.resumed', data: { releasedRuns: 2 } }]));

  it('decides nothing when resuming an active deployment', () => given(active).when({ type: 'resume', releasableRuns: 0 }).then([]));

  it('revokes an active or paused deployment', () => {
    given(active).when({ type: 'revoke', reason: 'leaked key' }).then([{ type: 'deployment.revoked', data: { reason: 'leaked key' } }]);
    given({ ...active, status: 'paused' }).when({ type: 'revoke', reason: 'done' }).then([{ type: 'deployment.revoked', data: { reason: 'done' } }]);
  });

  it('refuses every change but a repeated revoke once revoked', () => {
    const revoked: DeploymentState = { ...active, status: 'revoked', statusReason: 'x' };
    given(revoked).when({ type: 'revoke', reason: 'again' }).then([]);
    given(revoked).when({ type: 'resume', releasableRuns: 0 }).thenRefuses(/revoked; it cannot resume/);
    given(revoked).when({ type: 'pause', reason: null }).thenRefuses(/revoked; it cannot pause/);
    given(revoked).when({ type: 'rollback', target }).thenRefuses(/revoked; it cannot rollback/);
  });

  it('rolls back to another version, naming both', () =>
    given(active).when({ type: 'rollback', target }).then([{ type: 'deployment.rolled_back', data: { fromVersion: 2, ...target } }]));

  it('refuses a rollback to the version already deployed', () =>
    given(active).when({ type: 'rollback', target: { ...target, version: 2 } }).thenRefuses(/already runs version 2/));

  it('updates to a newer version, naming both', () =>
    given(active).when({ type: 'update', target: { ...target, version: 3 } }).then([{ type: 'deployment.updated', data: { fromVersion: 2, ...target, version: 3 } }]));

  it('decides nothing when updating to the version already deployed, so a retried update is harmless', () =>
    given(active).when({ type: 'update', target: { ...target, version: 2 } }).then([]));

  it('refuses an update to an older version: that is a rollback', () =>
    given(active).when({ type: 'update', target }).thenRefuses(/older than the deployed version 2; roll back/));

  it('refuses an update once revoked', () =>
    given({ ...active, status: 'revoked', statusReason: 'x' }).when({ type: 'update', target: { ...target, version: 3 } }).thenRefuses(/revoked; it cannot update/));
});

describe('evolveDeployment', () => {
  it('folds pause, resume, rollback, update and revoke into the state', () => {
    const events = [
      ...decideDeployment({ type: 'pause', reason: 'p' }, active),
      { type: 'deployment.resumed' as const, data: { releasedRuns: 0 } },
      { type: 'deployment.rolled_back' as const, data: { fromVersion: 2, ...target } },
      { type: 'deployment.updated' as const, data: { fromVersion: 1, ...target, version: 4 } },
      { type: 'deployment.revoked' as const, data: { reason: 'r' } },
    ];
    const states = events.reduce<DeploymentState[]>((acc, event) => [...acc, evolveDeployment(acc[acc.length - 1] ?? active, event)], []);
    expect(states.map((s) => [s.status, s.version, s.statusReason])).toEqual([
      ['paused', 2, 'p'],
      ['active', 2, null],
      ['active', 1, null],
      ['active', 4, null],
      ['revoked', 4, 'r'],
    ]);
  });
});
