import { CommandBus, RemoteCommandError } from '@packetagent/bus';
import { ATTENTION_DEADLINE_PURPOSE, PolicyCommands, type AttentionView } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { admit, authorize, controlDeployment, deploy, OPERATOR, startPolicy, type AuthorizeInput, type PolicyHarness, type ToolGrants } from '../testing/policy.testkit';
import { AnswerAttention } from './usecases/answer-attention';

const TOOLS: ToolGrants = [
  { tool: 'slack_post', verbs: ['post'], approval: 'always', credentials: ['slack_release_channel'] },
  { tool: 'email_send', verbs: ['send'], resources: ['*@example.com'], approval: 'first_use', credentials: [] },
];

const post = (runId: string, text: string): AuthorizeInput => ({
  runId, tool: 'slack_post', verb: 'post', resource: '#releases', credentials: ['slack_release_channel'], arguments: { text },
});

describe(AnswerAttention.name, () => {
  let h: PolicyHarness;
  let clockOffsetMs = 0;
  let sequence = 0;
  const other = (): CommandBus => h.replicas[1]!.get(CommandBus);

  const approve = (bus: CommandBus, attentionId: string, scope: 'once' | 'run' = 'once') =>
    bus.request(PolicyCommands.approveAttention, { workspaceId: h.workspaceId, attentionId, scope, actor: OPERATOR });
  const reject = (bus: CommandBus, attentionId: string) =>
    bus.request(PolicyCommands.rejectAttention, { workspaceId: h.workspaceId, attentionId, reason: 'not now', actor: OPERATOR });
  const get = (attentionId: string, workspaceId = h.workspaceId) => h.bus.request(PolicyCommands.getAttention, { workspaceId, attentionId });

  /** A fresh deployment and run, so each case starts with no approvals. */
  async function freshRun(): Promise<{ runId: string; deploymentId: string }> {
    sequence++;
    const ids = { runId: `r-att-${sequence}`, deploymentId: `d-att-${sequence}` };
    await deploy(h, ids.deploymentId, TOOLS);
    await admit(h, ids.runId, ids.deploymentId);
    return ids;
  }

  async function ask(call: AuthorizeInput): Promise<string> {
    const result = await authorize(h, call);
    expect(result.decision).toBe('approval_required');
    return result.approvalId!;
  }

  function loserOf(results: PromiseSettledResult<AttentionView>[]): { winner: AttentionView; loser: RemoteCommandError } {
    const won = results.filter((result): result is PromiseFulfilledResult<AttentionView> => result.status === 'fulfilled');
    const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(RemoteCommandError);
    return { winner: won[0]!.value, loser: lost[0]!.reason as RemoteCommandError };
  }

  beforeAll(async () => {
    h = await startPolicy({ replicas: 2, policy: { clock: () => new Date(Date.now() + clockOffsetMs), defaultApprovalTimeoutSeconds: 120 } });
  });

  afterAll(() => h?.close());

  it('asks once per run and call when the same call is repeated', async () => {
    const { runId } = await freshRun();
    const first = await ask(post(runId, 'hello'));
    const second = await authorize(h, post(runId, 'hello'));
    expect(second).toMatchObject({ decision: 'approval_required', approvalId: first, reason: { code: 'approval_pending' } });
    const events = await h.store.readStream(`attention-${first}`);
    expect(events.map((event) => event.type)).toEqual(['attention.requested']);
    expect(await get(first)).toMatchObject({ state: 'open', runId, tool: 'slack_post', resource: '#releases', arguments: { text: 'hello' } });
  });

  it('allows an approved-once call exactly once', async () => {
    const { runId } = await freshRun();
    const id = await ask(post(runId, 'once'));
    await approve(h.bus, id, 'once');
    expect(await authorize(h, post(runId, 'once'))).toMatchObject({ decision: 'allow', reason: { code: 'approved_once' }, approvalId: id });
    const again = await authorize(h, post(runId, 'once'));
    expect(again.decision).toBe('approval_required');
    expect(again.approvalId).not.toBe(id);
    expect(await authorize(h, post(runId, 'a different message'))).toMatchObject({ decision: 'approval_required' });
  });

  it('covers identical calls of the same run only when approved for the run', async () => {
    const first = await freshRun();
    const id = await ask(post(first.runId, 'first message'));
    await approve(h.bus, id, 'run');
    // Another message to the same channel is the same tool, verb and resource: covered.
    expect(await authorize(h, post(first.runId, 'second message'))).toMatchObject({ decision: 'allow', reason: { code: 'approved_for_run' }, approvalId: id });
    expect(await authorize(h, post(first.runId, 'third message'))).toMatchObject({ decision: 'allow', reason: { code: 'approved_for_run' } });
    expect(await authorize(h, { ...post(first.runId, 'x'), resource: '#general' })).toMatchObject({ decision: 'approval_required' });
    await admit(h, `${first.runId}-b`, first.deploymentId);
    expect(await authorize(h, post(`${first.runId}-b`, 'second message'))).toMatchObject({ decision: 'approval_required', reason: { code: 'approval_required' } });
  });

  it('allows later identical calls after an approved first use', async () => {
    const { runId } = await freshRun();
    const email = (body: string): AuthorizeInput => ({ runId, tool: 'email_send', verb: 'send', resource: 'ops@example.com', arguments: { body } });
    const id = await ask(email('one'));
    expect((await authorize(h, email('one'))).reason.code).toBe('approval_pending');
    await approve(h.bus, id, 'once');
    expect(await authorize(h, email('two'))).toMatchObject({ decision: 'allow', reason: { code: 'approved_for_run' } });
    expect(await authorize(h, { ...email('three'), resource: 'dev@example.com' })).toMatchObject({ decision: 'approval_required', reason: { code: 'first_use' } });
  });

  it('denies a rejected call', async () => {
    const { runId } = await freshRun();
    const id = await ask(post(runId, 'reject me'));
    await reject(h.bus, id);
    expect(await authorize(h, post(runId, 'reject me'))).toMatchObject({ decision: 'deny', reason: { code: 'approval_rejected' }, approvalId: id });
    expect(await get(id)).toMatchObject({ state: 'rejected', reason: 'not now', answeredBy: OPERATOR });
  });

  it('records exactly one outcome when approve and reject race, and tells the loser which', async () => {
    const { runId } = await freshRun();
    for (let round = 0; round < 4; round++) {
      const id = await ask(post(runId, `race ${round}`));
      const { winner, loser } = loserOf(await Promise.allSettled([approve(h.bus, id), reject(other(), id)]));
      expect(loser.code).toBe('attention_already_answered');
      expect(loser.message).toContain(`already ${winner.state}`);
      const events = await h.store.readStream(`attention-${id}`);
      expect(events.map((event) => event.type)).toEqual(['attention.requested', winner.state === 'approved' ? 'attention.approved' : 'attention.rejected']);
    }
  });

  it('refuses a second approval naming the first', async () => {
    const { runId } = await freshRun();
    const id = await ask(post(runId, 'double'));
    const { winner, loser } = loserOf(await Promise.allSettled([approve(h.bus, id, 'once'), approve(other(), id, 'run')]));
    expect(winner.state).toBe('approved');
    expect(loser).toMatchObject({ code: 'attention_already_answered', message: `attention ${id} is already approved` });
    expect((await h.store.readStream(`attention-${id}`)).length).toBe(2);
  });

  it('records exactly one outcome when an approval races a revocation, and denies the call either way', async () => {
    const { runId, deploymentId } = await freshRun();
    const id = await ask(post(runId, 'revoke race'));
    const [approval] = await Promise.allSettled([approve(other(), id, 'run'), controlDeployment(h, deploymentId, 'deployment.revoked')]);
    const events = await h.store.readStream(`attention-${id}`);
    expect(events).toHaveLength(2);
    if (approval.status === 'fulfilled') {
      expect(events[1]!.type).toBe('attention.approved');
    } else {
      expect(events[1]!.type).toBe('attention.withdrawn');
      expect(approval.reason).toMatchObject({ code: 'attention_already_answered', message: `attention ${id} is already withdrawn` });
    }
    expect(await authorize(h, post(runId, 'revoke race'))).toMatchObject({ decision: 'deny', reason: { code: 'deployment_revoked' } });
  });

  it('withdraws open attention and refuses its approval once the deployment is revoked', async () => {
    const { runId, deploymentId } = await freshRun();
    const id = await ask(post(runId, 'withdraw me'));
    await controlDeployment(h, deploymentId, 'deployment.revoked');
    expect(await get(id)).toMatchObject({ state: 'withdrawn' });
    await expect(approve(h.bus, id)).rejects.toMatchObject({ code: 'attention_already_answered', message: `attention ${id} is already withdrawn` });
  });

  it('rechecks the deployment at use when it was paused after the approval', async () => {
    const { runId, deploymentId } = await freshRun();
    const id = await ask(post(runId, 'paused later'));
    await approve(h.bus, id, 'once');
    await controlDeployment(h, deploymentId, 'deployment.paused');
    expect(await authorize(h, post(runId, 'paused later'))).toMatchObject({ decision: 'deny', reason: { code: 'deployment_paused' } });
    await controlDeployment(h, deploymentId, 'deployment.resumed');
    // The denied call did not use the approval up.
    expect(await authorize(h, post(runId, 'paused later'))).toMatchObject({ decision: 'allow', reason: { code: 'approved_once' } });
  });

  it('lists a workspace\'s attention by state and hides other workspaces\' records', async () => {
    const { runId } = await freshRun();
    const id = await ask(post(runId, 'listed'));
    const open = await h.bus.request(PolicyCommands.listAttention, { workspaceId: h.workspaceId, state: 'open' });
    expect(open.items.map((item) => item.id)).toContain(id);
    expect(open.items.every((item) => item.state === 'open')).toBe(true);
    const none = await h.bus.request(PolicyCommands.listAttention, { workspaceId: 'ws_elsewhere' });
    expect(none.items).toEqual([]);
    await expect(get(id, 'ws_elsewhere')).rejects.toMatchObject({ code: 'attention_not_found' });
    await expect(approve(h.bus, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).rejects.toMatchObject({ code: 'attention_not_found' });
  });

  it('expires an unanswered attention when its deadline timer fires, and then denies the call', async () => {
    const { runId } = await freshRun();
    const call = post(runId, 'too late');
    const id = await ask(call);
    const timer = await eventually(() => h.scheduler.set.find((entry) => (entry.payload as { attentionId?: string }).attentionId === id), { what: 'the deadline timer' });
    expect(timer).toMatchObject({ workspaceId: h.workspaceId, purpose: ATTENTION_DEADLINE_PURPOSE, payload: { attentionId: id } });
    const view = await get(id);
    expect(timer.dueAt).toBe(view.deadline);
    expect(Date.parse(view.deadline) - Date.parse(view.createdAt)).toBeGreaterThanOrEqual(119_000);

    clockOffsetMs = 121_000;
    try {
      await h.scheduler.fire(timer.timerId);
      await eventually(async () => (await get(id)).state === 'expired', { what: 'the attention to expire' });
      expect((await h.store.readStream(`attention-${id}`)).map((event) => event.type)).toEqual(['attention.requested', 'attention.expired']);
      expect(await authorize(h, call)).toMatchObject({ decision: 'deny', reason: { code: 'approval_expired' }, approvalId: id });
      await expect(approve(h.bus, id)).rejects.toMatchObject({ code: 'attention_already_answered', message: `attention ${id} is already expired` });
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('expires at use when the deadline passed before any timer fired', async () => {
    const { runId } = await freshRun();
    const call = post(runId, 'no timer yet');
    const id = await ask(call);
    clockOffsetMs = 121_000;
    try {
      await expect(approve(h.bus, id)).rejects.toMatchObject({ code: 'attention_already_answered', message: `attention ${id} is already expired` });
      expect(await authorize(h, call)).toMatchObject({ decision: 'deny', reason: { code: 'approval_expired' } });
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('cancels the deadline timer once the attention is answered', async () => {
    const { runId } = await freshRun();
    const id = await ask(post(runId, 'cancel timer'));
    await eventually(async () => (await get(id)).version === 1 && h.scheduler.set.some((entry) => entry.timerId.endsWith(id)));
    await eventually(async () => (await h.db.pool.query(`SELECT 1 FROM policy.attention WHERE attention_id = $1 AND timer_set`, [id])).rowCount === 1);
    await approve(h.bus, id);
    expect(h.scheduler.cancelled).toContain(`${ATTENTION_DEADLINE_PURPOSE}-${id}`);
  });
});
