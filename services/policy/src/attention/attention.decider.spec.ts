import type { ApprovalRules } from '@packetagent/contracts';
import { ApprovalAlreadyRecordedError, ApproverNotAllowedError, AttentionAlreadyAnsweredError, EditNotSupportedError } from '../shared/errors';
import { decide, evolve, initialAttention, type Approver, type Attention, type AttentionEvent } from './attention.decider';

const actor = { kind: 'user', id: 'u1' } as const;
const approver: Approver = { actor };
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
    expect(decide({ kind: 'approve', scope: 'run', approver, now: before }, given(requested))).toEqual([
      { type: 'attention.approved', data: { scope: 'run', actor } },
    ]);
  });

  it('expires instead of approving when the answer comes after the deadline', () => {
    expect(decide({ kind: 'approve', scope: 'once', approver, now: after }, given(requested))).toEqual([
      { type: 'attention.expired', data: { deadline } },
    ]);
  });

  it('refuses a second answer naming the state that stands', () => {
    const rejected = given(requested, { type: 'attention.rejected', data: { reason: 'no', actor } });
    expect(() => decide({ kind: 'approve', scope: 'once', approver, now: before }, rejected)).toThrow(AttentionAlreadyAnsweredError);
    expect(() => decide({ kind: 'approve', scope: 'once', approver, now: before }, rejected)).toThrow('already rejected');
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

  describe('under approval rules', () => {
    const underRules = (rules: ApprovalRules): AttentionEvent => ({ type: 'attention.requested', data: { ...requested.data, rules } as typeof requested.data });
    const user = (id: string, extra: Partial<Approver> = {}): Approver => ({ actor: { kind: 'user', id }, ...extra });
    const approveBy = (who: Approver, scope: 'once' | 'run' = 'run') => ({ kind: 'approve', scope, approver: who, now: before }) as const;
    /** Folds the events `decide` answers, as the stream would. */
    function then(state: Attention, command: Parameters<typeof decide>[0]): { events: AttentionEvent[]; state: Attention } {
      const events = decide(command, state);
      return { events, state: events.reduce<Attention>((folded, event) => evolve(folded, event), state) };
    }

    it('needs two distinct approvers of three for a quorum of 2, and lists both on the approval', () => {
      const listed = underRules({ mode: 'always', quorum: 2, approvers: ['u1', 'u2', 'ops@example.com'] });
      const first = then(given(listed), approveBy(user('u1')));
      expect(first.events).toEqual([{ type: 'attention.approval_recorded', data: { actor: { kind: 'user', id: 'u1' }, scope: 'run', at: before.toISOString() } }]);
      expect(first.state).toMatchObject({ status: 'open', approvals: [{ actor: { kind: 'user', id: 'u1' } }] });
      const second = then(first.state, approveBy(user('u9', { email: 'Ops@Example.com' }), 'once'));
      expect(second.events).toEqual([
        { type: 'attention.approved', data: { scope: 'once', actor: { kind: 'user', id: 'u9' }, approvers: [{ kind: 'user', id: 'u1' }, { kind: 'user', id: 'u9' }] } },
      ]);
      expect(second.state).toMatchObject({ status: 'approved', scope: 'once' });
    });

    it('refuses the same approver twice under a quorum instead of counting them again', () => {
      const state = then(given(underRules({ mode: 'always', quorum: 2 })), approveBy(user('u1'))).state;
      expect(() => decide(approveBy(user('u1')), state)).toThrow(ApprovalAlreadyRecordedError);
    });

    it('refuses someone the approver list does not name, and one who said nothing about who they are', () => {
      const state = given(underRules({ mode: 'always', approvers: ['alice@example.com'] }));
      expect(() => decide(approveBy(user('u2', { email: 'bob@example.com' })), state)).toThrow(ApproverNotAllowedError);
      expect(() => decide(approveBy(user('u2')), state)).toThrow(ApproverNotAllowedError);
      expect(decide(approveBy(user('u2', { email: 'alice@example.com' })), state)).toMatchObject([{ type: 'attention.approved' }]);
    });

    it('records the final approver\'s role with the approval', () => {
      const state = given(underRules({ mode: 'always', approvers: 'member' }));
      expect(decide(approveBy(user('u2', { role: 'admin' })), state)).toMatchObject([{ type: 'attention.approved', data: { role: 'admin' } }]);
    });

    it('refuses a role below the rules\' role, and a caller who gave no role at all', () => {
      const state = given(underRules({ mode: 'always', approvers: 'admin' }));
      expect(() => decide(approveBy(user('u2', { role: 'member' })), state)).toThrow(ApproverNotAllowedError);
      expect(() => decide(approveBy(user('u2')), state)).toThrow('approvers hold at least the admin role');
      expect(() => decide({ kind: 'reject', reason: 'no', approver: user('u2', { role: 'viewer' }), now: before }, state)).toThrow(ApproverNotAllowedError);
      expect(decide(approveBy(user('u2', { role: 'owner' })), state)).toMatchObject([{ type: 'attention.approved' }]);
    });

    it('rejects on the first allowed approver\'s reject, whatever approvals were recorded', () => {
      const state = then(given(underRules({ mode: 'always', quorum: 3 })), approveBy(user('u1'))).state;
      expect(decide({ kind: 'reject', reason: 'not now', approver: user('u2'), now: before }, state)).toEqual([
        { type: 'attention.rejected', data: { reason: 'not now', actor: { kind: 'user', id: 'u2' } } },
      ]);
    });

    it('refuses an edit when more than one approver is needed', () => {
      const edit = { originalDigest: 'a'.repeat(64), editedDigest: 'b'.repeat(64), arguments: {}, editor: actor };
      expect(() => decide({ ...approveBy(user('u1')), edit }, given(underRules({ mode: 'always', quorum: 2 })))).toThrow(EditNotSupportedError);
      expect(decide({ ...approveBy(user('u1')), edit }, given(requested))).toEqual([{ type: 'attention.approved', data: { scope: 'run', actor: { kind: 'user', id: 'u1' }, edit } }]);
    });

    it('records a reminder and an escalation once each while the attention is open', () => {
      const open = given(underRules({ mode: 'always', remindAfter: '15m', escalate: { after: '1h', to: 'oncall' } }));
      const reminded = then(open, { kind: 'remind', now: before });
      expect(reminded.events).toEqual([{ type: 'attention.reminded', data: { at: before.toISOString() } }]);
      expect(decide({ kind: 'remind', now: before }, reminded.state)).toEqual([]);
      const escalated = then(reminded.state, { kind: 'escalate', now: before });
      expect(escalated.events).toEqual([{ type: 'attention.escalated', data: { to: 'oncall', at: before.toISOString() } }]);
      expect(decide({ kind: 'escalate', now: before }, escalated.state)).toEqual([]);
    });

    it('records no reminder or escalation once the attention is answered, or past its deadline', () => {
      const rules: ApprovalRules = { mode: 'always', remindAfter: '15m', escalate: { after: '1h', to: 'oncall' } };
      const approved = given(underRules(rules), { type: 'attention.approved', data: { scope: 'once', actor } });
      expect(decide({ kind: 'remind', now: before }, approved)).toEqual([]);
      expect(decide({ kind: 'escalate', now: before }, approved)).toEqual([]);
      expect(decide({ kind: 'remind', now: after }, given(underRules(rules)))).toEqual([]);
      expect(decide({ kind: 'escalate', now: before }, given(requested))).toEqual([]);
    });
  });
});
