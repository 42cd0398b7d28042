import { DeploymentRevokedError } from '../shared/errors';
import { decideAdmission, releasableRuns, type AdmissionState } from './admission.decider';

const open: AdmissionState = { deploymentId: 'd1', status: 'active', statusReason: null, activeRuns: 0, heldRuns: 0, maxConcurrentRuns: 2 };

describe('decideAdmission', () => {
  it('admits when the deployment is active and below its limit', () => {
    expect(decideAdmission(open)).toEqual({ outcome: 'admit' });
    expect(decideAdmission({ ...open, activeRuns: 1 })).toEqual({ outcome: 'admit' });
  });

  it('holds for the concurrency limit when the limit is reached', () => {
    expect(decideAdmission({ ...open, activeRuns: 2 })).toEqual({ outcome: 'hold', reason: 'concurrency_limit' });
  });

  it('holds behind earlier held runs even when a slot is free, keeping arrival order', () => {
    expect(decideAdmission({ ...open, activeRuns: 0, heldRuns: 1 })).toEqual({ outcome: 'hold', reason: 'concurrency_limit' });
  });

  it('defers when the deployment is paused', () => {
    expect(decideAdmission({ ...open, status: 'paused' })).toEqual({ outcome: 'hold', reason: 'deployment_paused' });
  });

  it('refuses with the reason when the deployment is revoked', () => {
    const sut = () => decideAdmission({ ...open, status: 'revoked', statusReason: 'credentials leaked' });
    expect(sut).toThrow(DeploymentRevokedError);
    expect(sut).toThrow('deployment d1 is revoked: credentials leaked; it admits no activations');
  });
});

describe('releasableRuns', () => {
  it('releases held runs up to the free slots', () => {
    expect(releasableRuns({ activeRuns: 0, heldRuns: 5, maxConcurrentRuns: 2 })).toBe(2);
    expect(releasableRuns({ activeRuns: 1, heldRuns: 5, maxConcurrentRuns: 2 })).toBe(1);
    expect(releasableRuns({ activeRuns: 2, heldRuns: 5, maxConcurrentRuns: 2 })).toBe(0);
    expect(releasableRuns({ activeRuns: 0, heldRuns: 1, maxConcurrentRuns: 4 })).toBe(1);
    expect(releasableRuns({ activeRuns: 3, heldRuns: 1, maxConcurrentRuns: 2 })).toBe(0);
  });
});
