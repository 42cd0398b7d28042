import { AttentionAlreadyAnsweredError } from '../shared/errors';
import { decide, evolve, initialAttention, type Attention, type AttentionEvent } from './attention.decider';

const actor = { kind: 'user', id: 'u1' } as const;
const deadline = '2030-01-01T00:00:00.000Z';
const before = new Date('2029-12-31T23:59:00Z');
const after = new Date('2030-01-01T00:00:01Z');

function given(...events: AttentionEvent[]): Attention {
  return events.reduce<Attention>((state, event) => evolve(state, event), initialAttention('a1'));
}

const requested: AttentionEvent = {
  type: 'attention.requested',
  data: {
    attentionId: 'a1', runId: 'r1', deploymentId: 'd1', versionDigest: 'a'.repeat(64), tool: 'slack_post', verb: 'post',
    resource: '#releases', arguments: null, requester: { kind: 'service', id: 'supervisor' }, deadline,
  },
};

describe('attention decider', () => {
  it('records an approval when the attention is open and before its deadline', () => {
    expect(decide({ kind: 'approve', scope: 'run', actor, now: before }, given(requested))).toEqual([
      { type: 'attention.approved', data: { scope: 'run', actor } },
    ]);
  });

  it('expires instead of approving when the answer comes after the deadline', () => {
    expect(decide({ kind: 'approve', scope: 'once', actor, now: after }, given(requested))).toEqual([
      { type: 'attention.expired', data: { deadline } },
    ]);
  });

  it('refuses a second answer naming the state that stands', () => {
    const rejected = given(requested, { type: 'attention.rejected', data: { reason: 'no', actor } });
    expect(() => decide({ kind: 'approve', scope: 'once', actor, now: before }, rejected)).toThrow(AttentionAlreadyAnsweredError);
    expect(() => decide({ kind: 'approve', scope: 'once', actor, now: before }, rejected)).toThrow('already rejected');
  });

  it('does nothing when a timer fires for an answered attention', () => {
    const approved = given(requested, { type: 'attention.approved', data: { scope: 'once', actor } });
    expect(decide({ kind: 'expire', now: after }, approved)).toEqual([]);
    expect(decide({ kind: 'withdraw', reason: 'revoked' }, approved)).toEqual([]);
  });

  it('does not expire an open attention before its deadline', () => {
    expect(decide({ kind: 'expire', now: before }, given(requested))).toEqual([]);
  });

  it('withdraws an open attention when its deployment is revoked', () => {
    const state = given(requested, { type: 'attention.withdrawn', data: { reason: 'deployment revoked' } });
    expect(state).toMatchObject({ status: 'withdrawn', version: 2 });
  });
});
