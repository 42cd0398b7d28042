import { DefinitionError } from './errors';
import { canonicalDefinition } from './canonical';
import { narrowDefinition } from './overrides';
import { BroadeningOverrideError } from './errors';
import { parseWorkerDefinition } from './parse';
import { approvalMode, approvalRules, approverAllowed, durationSeconds } from './approval-rules';

const source = (approval: string, notifications = '[{ name: oncall, on: [escalation], channel: email, to: ops@example.com }]') => `
apiVersion: packetagent/v1
kind: Worker
name: release-notes
model: { preset: default }
instructions: Post release notes.
tools:
  - { tool: slack_post, resources: ["#releases"], approval: ${approval} }
exit: { finish: { criteria: ["posted"] } }
notifications: ${notifications}
`;

function issuesOf(approval: string, notifications?: string): Array<{ path: string; message: string }> {
  try {
    parseWorkerDefinition(source(approval, notifications), 'yaml');
  } catch (error) {
    if (error instanceof DefinitionError) return [...error.issues];
    throw error;
  }
  throw new Error('the definition parsed');
}

describe('approval rules', () => {
  it('keeps a plain mode a string, so the canonical form and digest of every definition stay as they were', () => {
    const sut = parseWorkerDefinition(source('first_use'), 'yaml');
    expect(sut.tools[0]!.approval).toBe('first_use');
    expect(canonicalDefinition(sut).canonical).toContain('"approval":"first_use"');
  });

  it('parses rules, lower-casing listed emails, and exposes the mode and the rules', () => {
    const sut = parseWorkerDefinition(source('{ mode: always, deadline: 2h, remindAfter: 15m, escalate: { after: 1h, to: oncall }, quorum: 2, approvers: [u1, Ops@Example.com] }'), 'yaml');
    const approval = sut.tools[0]!.approval;
    expect(approvalMode(approval)).toBe('always');
    expect(approvalRules(approval)).toEqual({ mode: 'always', deadline: '2h', remindAfter: '15m', escalate: { after: '1h', to: 'oncall' }, quorum: 2, approvers: ['u1', 'ops@example.com'] });
    expect(approvalRules('always')).toBeNull();
  });

  it.each([
    ['{ mode: always, deadline: 90 }', 'tools[0].approval.deadline'],
    ['{ mode: always, deadline: 1w }', 'tools[0].approval.deadline'],
    ['{ mode: always, deadline: 31d }', 'tools[0].approval.deadline'],
    ['{ mode: never }', 'tools[0].approval.mode'],
  ])('refuses %s at the field that is wrong', (approval, path) => {
    expect(issuesOf(approval).map((issue) => issue.path)).toContain(path);
  });

  it('words an unknown mode with the modes there are', () => {
    expect(issuesOf('sometimes')).toContainEqual({ path: 'tools[0].approval', message: 'must be one of: never, first_use, always' });
  });

  it('refuses a reminder or an escalation at or after the deadline, and a quorum the list cannot reach, with their paths', () => {
    const issues = issuesOf('{ mode: always, deadline: 1h, remindAfter: 60m, escalate: { after: 2h, to: oncall }, quorum: 3, approvers: [a, b] }');
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: 'tools[0].approval.remindAfter', message: 'must be before the deadline (1h)' },
        { path: 'tools[0].approval.escalate.after', message: 'must be before the deadline (1h)' },
        { path: 'tools[0].approval.quorum', message: 'needs 3 approvers; the list names 2' },
      ]),
    );
  });

  it('refuses an escalation to a route the definition does not name', () => {
    expect(issuesOf('{ mode: always, escalate: { after: 1h, to: pager } }')).toEqual([
      { path: 'tools[0].approval.escalate.to', message: 'no notification route is named "pager" (named: oncall)' },
    ]);
  });

  it('reads durations in one unit, up to 30 days', () => {
    expect([durationSeconds('30s'), durationSeconds('15m'), durationSeconds('2h'), durationSeconds('30d'), durationSeconds('31d'), durationSeconds('01h')]).toEqual([30, 900, 7200, 2_592_000, null, null]);
  });

  it('allows an approver by role rank or by id or email, and no one when nothing is known', () => {
    expect(approverAllowed({ approvers: 'member' }, { id: 'u', role: 'admin' })).toBe(true);
    expect(approverAllowed({ approvers: 'admin' }, { id: 'u', role: 'member' })).toBe(false);
    expect(approverAllowed({ approvers: 'admin' }, { id: 'u' })).toBe(false);
    expect(approverAllowed({ approvers: ['a@example.com'] }, { id: 'u', email: 'A@example.com' })).toBe(true);
    expect(approverAllowed(null, { id: 'u' })).toBe(true);
  });

  describe('in deployment overrides', () => {
    const version = parseWorkerDefinition(source('{ mode: first_use, deadline: 2h, quorum: 2, approvers: admin }'), 'yaml');
    const narrowed = (approval: unknown) => narrowDefinition(version, { tools: [{ tool: 'slack_post', approval }] }).tools[0]!.approval;
    const refusal = (approval: unknown) => {
      try {
        narrowed(approval);
      } catch (error) {
        if (error instanceof BroadeningOverrideError) return error.issues.map((issue) => issue.path);
        throw error;
      }
      throw new Error('not refused');
    };

    it('keeps the version\'s rules under a stricter plain mode', () => {
      expect(narrowed('always')).toEqual({ mode: 'always', deadline: '2h', quorum: 2, approvers: 'admin' });
    });

    it('takes rules that are as strict or stricter, with reminders set freely', () => {
      expect(narrowed({ mode: 'always', deadline: '1h', remindAfter: '10m', quorum: 3, approvers: 'owner' })).toEqual({ mode: 'always', deadline: '1h', remindAfter: '10m', quorum: 3, approvers: 'owner' });
    });

    it('refuses a longer deadline, a smaller quorum, a lower role and a weaker mode', () => {
      expect(refusal({ mode: 'first_use', deadline: '3h', quorum: 2, approvers: 'admin' })).toEqual(['overrides.tools[0].approval.deadline']);
      expect(refusal({ mode: 'first_use', deadline: '2h', quorum: 1, approvers: 'member' })).toEqual(['overrides.tools[0].approval.quorum', 'overrides.tools[0].approval.approvers']);
      expect(refusal('never')).toEqual(['overrides.tools[0].approval']);
    });
  });
});
