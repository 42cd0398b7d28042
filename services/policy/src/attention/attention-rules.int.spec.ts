import { PolicyCommands, type ActorRef, type Role } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { ToolRegistry } from '@packetagent/tools';
import { admit, authorize, deploy, OPERATOR, startPolicy, type AuthorizeInput, type PolicyHarness, type ToolGrants } from '../testing/policy.testkit';
import { AnswerAttention } from './usecases/answer-attention';

const REMINDED = { mode: 'always', deadline: '2h', remindAfter: '15m', escalate: { after: '1h', to: 'oncall' } };
const QUORUM = { mode: 'always', quorum: 2, approvers: ['u-alice', 'bob@example.com', 'u-carol'] };
const ADMINS = { mode: 'always', approvers: 'admin' };

const grants = (approval: unknown): ToolGrants => [
  { tool: 'slack_post', verbs: ['post'], resources: ['#releases', '#ops'], approval: approval as never, credentials: ['slack_release_channel'] },
];

const registry = new ToolRegistry();
/** The call as the supervisor plans it, so its digest is the one an edit is checked under. */
function slack(runId: string, args: { channel: string; text: string }): AuthorizeInput & { callDigest: string } {
  const planned = registry.plan('c1', 'slack_post', { ...args, credential: 'slack_release_channel' });
  return { runId, tool: 'slack_post', verb: planned.verb, resource: planned.resource, credentials: planned.credentials, arguments: planned.redactedArgs, callDigest: planned.callDigest };
}

const user = (id: string): ActorRef => ({ kind: 'user', id });

describe(`${AnswerAttention.name} under approval rules`, () => {
  let h: PolicyHarness;
  let sequence = 0;

  const approve = (attentionId: string, actor: ActorRef = OPERATOR, extra: { role?: Role; email?: string; arguments?: Record<string, unknown> } = {}) =>
    h.bus.request(PolicyCommands.approveAttention, { workspaceId: h.workspaceId, attentionId, scope: 'once', actor, ...(extra as object) });
  const get = (attentionId: string) => h.bus.request(PolicyCommands.getAttention, { workspaceId: h.workspaceId, attentionId });
  const types = async (attentionId: string) => (await h.store.readStream(`attention-${attentionId}`)).map((event) => event.type);

  async function ask(approval: unknown, call = (runId: string) => slack(runId, { channel: '#releases', text: 'v1.2 is out' })): Promise<{ id: string; runId: string }> {
    sequence++;
    const runId = `r-rules-${sequence}`;
    await deploy(h, `d-rules-${sequence}`, grants(approval));
    await admit(h, runId, `d-rules-${sequence}`);
    const result = await authorize(h, call(runId));
    expect(result.decision).toBe('approval_required');
    return { id: result.approvalId!, runId };
  }

  const timerOf = (id: string, purpose: string) =>
    eventually(() => h.scheduler.set.find((entry) => entry.timerId === `${purpose}-${id}`), { what: `the ${purpose} timer` });

  beforeAll(async () => {
    h = await startPolicy({ policy: { defaultApprovalTimeoutSeconds: 120 } });
  });

  afterAll(() => h?.close());

  it('opens the attention with its rules, deadline, reminder and escalation, and records each timer once while it is open', async () => {
    const { id } = await ask(REMINDED);
    const [requested] = await h.store.readStream(`attention-${id}`);
    const data = requested!.data as { deadline: string; remindAt: string; escalateAt: string; rules: unknown };
    expect(data.rules).toEqual(REMINDED);
    const opened = Date.parse((await get(id)).createdAt);
    expect(Date.parse(data.deadline) - opened).toBeGreaterThan(7_190_000);
    expect(Date.parse(data.remindAt) - opened).toBeGreaterThan(890_000);
    expect(Date.parse(data.escalateAt) - opened).toBeGreaterThan(3_590_000);

    const reminder = await timerOf(id, 'attention_reminder');
    const escalation = await timerOf(id, 'attention_escalation');
    expect(reminder.dueAt).toBe(data.remindAt);
    await h.scheduler.fire(reminder.timerId);
    await eventually(async () => (await get(id)).remindedAt !== null, { what: 'the reminder' });
    // A timer fires once; a second fire (a redelivery) records nothing more.
    await h.scheduler.fire(reminder.timerId);
    await h.scheduler.fire(escalation.timerId);
    await eventually(async () => (await get(id)).escalatedAt !== null, { what: 'the escalation' });
    expect(await types(id)).toEqual(['attention.requested', 'attention.reminded', 'attention.escalated']);
    const escalated = (await h.store.readStream(`attention-${id}`))[2]!;
    expect(escalated.data).toMatchObject({ to: 'oncall' });
    expect(await get(id)).toMatchObject({ state: 'open', rules: REMINDED, remindAt: data.remindAt, escalateAt: data.escalateAt });
  });

  it('cancels the reminder and escalation once answered, and records nothing when they fire after', async () => {
    const { id } = await ask(REMINDED);
    const reminder = await timerOf(id, 'attention_reminder');
    await eventually(async () => (await h.db.pool.query(`SELECT 1 FROM policy.attention WHERE attention_id = $1 AND timer_set`, [id])).rowCount === 1);
    await approve(id);
    expect(h.scheduler.cancelled).toEqual(expect.arrayContaining([`attention_deadline-${id}`, `attention_reminder-${id}`, `attention_escalation-${id}`]));
    await h.scheduler.fire(reminder.timerId);
    // The timer's event is handled once the consumer has moved past it: a later fire of another attention shows that.
    const { id: witness } = await ask(REMINDED);
    await h.scheduler.fire((await timerOf(witness, 'attention_reminder')).timerId);
    await eventually(async () => (await get(witness)).remindedAt !== null, { what: 'the witness reminder' });
    expect(await types(id)).toEqual(['attention.requested', 'attention.approved']);
  });

  it('approves under a quorum of 2 of 3 only with two distinct listed approvers, and allows the call then', async () => {
    const { id, runId } = await ask(QUORUM);
    await expect(approve(id, user('u-mallory'), { email: 'mallory@example.com' })).rejects.toMatchObject({ code: 'approver_not_allowed' });
    expect(await approve(id, user('u-alice'))).toMatchObject({ state: 'open', approvals: [{ actor: user('u-alice'), scope: 'once' }] });
    await expect(approve(id, user('u-alice'))).rejects.toMatchObject({ code: 'approval_already_recorded' });
    expect((await authorize(h, slack(runId, { channel: '#releases', text: 'v1.2 is out' }))).reason.code).toBe('approval_pending');
    expect(await approve(id, user('u-bob'), { email: 'Bob@Example.com' })).toMatchObject({ state: 'approved' });
    const events = await h.store.readStream(`attention-${id}`);
    expect(events.map((event) => event.type)).toEqual(['attention.requested', 'attention.approval_recorded', 'attention.approved']);
    expect(events[2]!.data).toMatchObject({ approvers: [user('u-alice'), user('u-bob')] });
    expect(await authorize(h, slack(runId, { channel: '#releases', text: 'v1.2 is out' }))).toMatchObject({ decision: 'allow', reason: { code: 'approved_once' } });
  });

  it('refuses an approver without the rules\' role, and one whose role was not given', async () => {
    const { id } = await ask(ADMINS);
    await expect(approve(id)).rejects.toMatchObject({ code: 'approver_not_allowed' });
    await expect(approve(id, OPERATOR, { role: 'member' })).rejects.toMatchObject({ code: 'approver_not_allowed' });
    await expect(h.bus.request(PolicyCommands.rejectAttention, { workspaceId: h.workspaceId, attentionId: id, reason: 'no', actor: OPERATOR })).rejects.toMatchObject({ code: 'approver_not_allowed' });
    expect(await types(id)).toEqual(['attention.requested']);
    expect(await approve(id, OPERATOR, { role: 'admin' })).toMatchObject({ state: 'approved' });
  });

  it('refuses edits that are invalid or not granted, leaving the attention open, and approves a granted edit in place of the call', async () => {
    const { id, runId } = await ask('always');
    const original = slack(runId, { channel: '#releases', text: 'v1.2 is out' });
    await expect(approve(id, OPERATOR, { arguments: { channel: '#releases' } })).rejects.toMatchObject({ code: 'edit_invalid' });
    await expect(approve(id, OPERATOR, { arguments: { channel: '#general', text: 'hi', credential: 'slack_release_channel' } })).rejects.toMatchObject({ code: 'edit_not_granted' });
    await expect(approve(id, OPERATOR, { arguments: { channel: '#releases', text: 'hi', credential: 'another_token' } })).rejects.toMatchObject({ code: 'edit_not_granted' });
    expect(await get(id)).toMatchObject({ state: 'open', version: 1 });

    const edited = slack(runId, { channel: '#ops', text: 'v1.2.1 is out' });
    const view = await approve(id, OPERATOR, { arguments: { channel: '#ops', text: 'v1.2.1 is out', credential: 'slack_release_channel' } });
    expect(view).toMatchObject({ state: 'approved', edit: { originalDigest: original.callDigest, editedDigest: edited.callDigest, editor: OPERATOR } });
    const approved = (await h.store.readStream(`attention-${id}`))[1]!;
    expect(approved.data).toMatchObject({ edit: { originalDigest: original.callDigest, editedDigest: edited.callDigest, arguments: { channel: '#ops', text: 'v1.2.1 is out' } } });

    expect(await authorize(h, original)).toMatchObject({
      decision: 'deny',
      reason: { code: 'approval_edited' },
      edit: { attentionId: id, editedDigest: edited.callDigest, arguments: { channel: '#ops', text: 'v1.2.1 is out', credential: 'slack_release_channel' }, editor: OPERATOR },
    });
    expect(await authorize(h, edited)).toMatchObject({ decision: 'allow', reason: { code: 'approved_once' }, approvalId: id });
    expect((await authorize(h, edited)).decision).toBe('approval_required');
  });

  it('refuses an edit of a call that needs more than one approver', async () => {
    const { id } = await ask(QUORUM);
    await expect(approve(id, user('u-alice'), { arguments: { channel: '#ops', text: 'x', credential: 'slack_release_channel' } })).rejects.toMatchObject({ code: 'edit_not_supported' });
    expect(await types(id)).toEqual(['attention.requested']);
  });
});
