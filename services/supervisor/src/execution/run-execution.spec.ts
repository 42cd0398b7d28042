import type { AuthorizeResult } from '@packetagent/contracts';
import { EventTooLargeError } from '@packetagent/eventstore';
import { foldRun } from '../run/run.state';
import { AnsweringGuard, CountingFaults, LimitedBudget, MemoryRunStream, memoryPorts, RecordedTimers, RecordingEffects, ScriptedModel } from '../testing/in-memory-ports';
import { admitted, pinnedRun } from '../testing/run-scenario';
import { RunExecution } from './run-execution';

const allow: AuthorizeResult = { decision: 'allow', reason: { code: 'granted', text: 'granted' } };
const approval: AuthorizeResult = { decision: 'approval_required', reason: { code: 'approval_required', text: 'always' }, approvalId: 'att1' };
const finish = { id: 'f', name: 'finish', arguments: { summary: 'done', criteria: [{ criterion: 'every release item has evidence', met: true }] }, rawArguments: '' };
const post = (id = 'p1') => ({ id, name: 'slack_post', arguments: { channel: '#releases', text: 'Missing: item 3', credential: 'slack_release_channel' }, rawArguments: '' });
const fetchCall = { id: 'g1', name: 'http_fetch', arguments: { url: 'https://ci.example.com/releases/1' }, rawArguments: '' };

function setUp(parts: { turns: ConstructorParameters<typeof ScriptedModel>[0]; answer?: (tool: string) => AuthorizeResult; free?: boolean; refuse?: string[]; pinned?: ReturnType<typeof pinnedRun> }) {
  const stream = new MemoryRunStream([admitted() as { type: string; data: unknown }]);
  const model = new ScriptedModel(parts.turns, parts.free ?? true);
  const guard = new AnsweringGuard((planned) => (parts.answer ?? (() => allow))(planned.tool));
  const budget = new LimitedBudget(new Set(parts.refuse ?? []));
  const effects = new RecordingEffects((planned) => (planned.tool === 'slack_post' && stream.controls.length > 0 ? 'hang' : { ok: true, output: `${planned.tool} ok`, summary: 'ok' }));
  const timers = new RecordedTimers();
  const faults = new CountingFaults();
  const ports = memoryPorts({ stream, model, guard, budget, effects, timers, faults });
  const pinned = parts.pinned ?? pinnedRun();
  const drive = (claim = 1) => new RunExecution(ports, foldRun('run1', 'ws1', stream.events), pinned, { replica: `r${claim}`, claim });
  return { stream, model, guard, budget, effects, timers, faults, drive };
}

describe(RunExecution.name, () => {
  it('drives a run to succeeded: claim and start first, each turn and call recorded, the effect between its receipts, the timer set and cancelled', async () => {
    const sut = setUp({ turns: [{ toolCalls: [fetchCall] }, { toolCalls: [post()] }, { toolCalls: [finish] }] });

    expect(await sut.drive().drive()).toEqual({ status: 'terminal' });

    expect(sut.stream.types()).toEqual([
      'run.admitted', 'run.claimed', 'run.started', 'run.criteria_set',
      'run.model_turn', 'run.checkpoint', 'run.tool_decided', 'run.tool_result', 'run.checkpoint',
      'run.model_turn', 'run.checkpoint', 'run.tool_decided', 'effect.prepared', 'effect.completed', 'run.tool_result', 'run.checkpoint',
      'run.model_turn', 'run.checkpoint', 'run.tool_result', 'run.succeeded',
    ]);
    expect(sut.effects.calls).toEqual([{ tool: 'http_fetch', idempotencyKey: 'run1:g1' }, { tool: 'slack_post', idempotencyKey: 'run1:p1' }]);
    expect(sut.budget.reserved).toEqual(['action:p1']);
    expect(sut.budget.settled).toEqual(['res-action:p1']);
    expect(sut.timers.set).toHaveLength(1);
    expect(sut.timers.cancelled).toBe(1);
    expect(sut.faults.appended).toEqual(sut.stream.types().slice(1));
  });

  it('parks on an approval, and a second wake with the approval still open appends nothing, not even its claim', async () => {
    const sut = setUp({ turns: [{ toolCalls: [post()] }], answer: (tool) => (tool === 'slack_post' ? approval : allow) });
    expect(await sut.drive().drive()).toEqual({ status: 'waiting', waitingOn: 'att1' });
    const parked = sut.stream.types();
    expect(parked.slice(-2)).toEqual(['run.tool_decided', 'run.waiting']);

    expect(sut.timers.set).toHaveLength(1);

    expect(await sut.drive(2).drive()).toEqual({ status: 'waiting', waitingOn: 'att1' });
    expect(sut.stream.types()).toEqual(parked);
    expect(sut.effects.calls).toEqual([]);
    expect(sut.timers.set).toHaveLength(1);
  });

  it('goes on where it was once approved, and the next claim is recorded with the first append', async () => {
    let answer = approval;
    const sut = setUp({ turns: [{ toolCalls: [post()] }, { toolCalls: [finish] }], answer: (tool) => (tool === 'slack_post' ? answer : allow) });
    await sut.drive().drive();
    const before = sut.stream.events.length;
    answer = { decision: 'allow', reason: { code: 'approved_once', text: 'approved' } };
    expect(await sut.drive(2).drive()).toEqual({ status: 'terminal' });
    expect(sut.stream.types().slice(before, before + 3)).toEqual(['run.claimed', 'run.resumed', 'run.tool_decided']);
    expect(sut.stream.types().at(-1)).toBe('run.succeeded');
  });

  it('parks a call whose credential must be connected again before anything is prepared or reserved, then makes it once reconnected', async () => {
    const sut = setUp({ turns: [{ toolCalls: [post()] }, { toolCalls: [finish] }] });
    sut.guard.refusing.set('slack_release_channel', { reason: 'the authorization server refused the refresh (invalid_grant)', attention: 'open' });
    expect(await sut.drive().drive()).toEqual({ status: 'waiting', waitingOn: 'reconnect-slack_release_channel' });
    expect(sut.stream.types().slice(-2)).toEqual(['run.tool_decided', 'run.waiting']);
    expect(sut.stream.events.at(-1)!.data).toEqual({ reason: 'reconnect', attentionId: 'reconnect-slack_release_channel', callId: 'p1' });
    expect(sut.effects.calls).toEqual([]);
    expect(sut.budget.reserved).toEqual([]);
    const parked = sut.stream.types();
    // Woken while the attention is still open: nothing new on the record.
    expect(await sut.drive(2).drive()).toEqual({ status: 'waiting', waitingOn: 'reconnect-slack_release_channel' });
    expect(sut.stream.types()).toEqual(parked);

    sut.guard.refusing.clear();
    expect(await sut.drive(3).drive()).toEqual({ status: 'terminal' });
    expect(sut.effects.calls).toEqual([{ tool: 'slack_post', idempotencyKey: 'run1:p1' }]);
    expect(sut.stream.types().slice(parked.length, parked.length + 4)).toEqual(['run.claimed', 'run.resumed', 'run.tool_decided', 'effect.prepared']);
    expect(sut.stream.types().at(-1)).toBe('run.succeeded');
  });

  it('ends failed(credential_unavailable) when the attention to reconnect was answered and the credential is still refused', async () => {
    const sut = setUp({ turns: [{ toolCalls: [post()] }] });
    sut.guard.refusing.set('slack_release_channel', { reason: 'invalid_grant', attention: 'open' });
    await sut.drive().drive();
    sut.guard.refusing.set('slack_release_channel', { reason: 'invalid_grant', attention: 'rejected' });
    expect(await sut.drive(2).drive()).toEqual({ status: 'terminal' });
    expect(sut.stream.events.at(-1)).toMatchObject({ type: 'run.failed', data: { reason: 'credential_unavailable' } });
    expect(sut.effects.calls).toEqual([]);
  });

  it('cuts a call in flight for a stop in the control stream, records its outcome as unknown and ends cancelled', async () => {
    const sut = setUp({ turns: [{ toolCalls: [post()] }] });
    const execution = sut.drive();
    // The request lands while the post is in flight, as the control consumer would deliver it.
    sut.effects.onCall = () => {
      sut.stream.requestControl('run.stop_requested', { reason: 'enough' });
      queueMicrotask(() => execution.interrupt('control'));
    };

    expect(await execution.drive()).toEqual({ status: 'terminal' });
    const events = sut.stream.events;
    expect(events.find((event) => event.type === 'effect.failed')?.data).toMatchObject({ outcomeKnown: false, error: { code: 'interrupted' } });
    expect(events.find((event) => event.type === 'run.stop_requested')?.data).toEqual({ reason: 'enough', controlVersion: 1, requestedBy: { kind: 'user', id: 'operator' } });
    expect(events.at(-1)).toMatchObject({ type: 'run.cancelled', data: { reason: 'enough' } });
    expect(sut.budget.released).toEqual(['res-action:p1']);
  });

  it('folds each control request once, however often it is woken', async () => {
    const sut = setUp({ turns: [{ toolCalls: [post()] }], answer: () => approval });
    sut.stream.requestControl('run.pause_requested', { reason: null });
    await sut.drive().drive();
    await sut.drive(2).drive();
    expect(sut.stream.types().filter((type) => type === 'run.pause_requested')).toHaveLength(1);
    expect(sut.stream.types().at(-1)).toBe('run.waiting');
  });

  it('ends budget_exhausted when the model call does not fit, having called nothing', async () => {
    const sut = setUp({ turns: [{ toolCalls: [finish] }], free: false, refuse: ['usd'] });
    expect(await sut.drive().drive()).toEqual({ status: 'terminal' });
    expect(sut.stream.types().at(-1)).toBe('run.budget_exhausted');
    expect(sut.model.requests).toEqual([]);
  });

  it('stops at once when another writer appended after its claim', async () => {
    const sut = setUp({ turns: [{ toolCalls: [fetchCall] }, { toolCalls: [finish] }] });
    const execution = sut.drive();
    sut.effects.onCall = () => sut.stream.appendAsOther('run.claimed', { replica: 'other', claim: 2, fromCheckpoint: null });
    const outcome = await execution.drive();
    expect(outcome).toMatchObject({ status: 'interrupted', reason: expect.stringContaining('another writer') });
    expect(sut.stream.types().at(-1)).toBe('run.claimed');
  });

  it('ends abandoned(unrecordable), with attention, when a step cannot be recorded', async () => {
    const sut = setUp({ turns: [{ toolCalls: [fetchCall] }] });
    const execution = sut.drive();
    sut.effects.onCall = () => (sut.stream.failNextAppend = new EventTooLargeError(0, 600_000, 524_288));
    expect(await execution.drive()).toEqual({ status: 'terminal' });
    expect(sut.stream.events.at(-1)).toMatchObject({ type: 'run.abandoned', data: { cause: 'unrecordable' } });
    expect(sut.guard.raised).toMatchObject([{ kind: 'run_unrecordable' }]);
  });

  it('gives up a prepared effect whose outcome was lost: stops what it may still be doing, then ends abandoned(uncertain_effect) with attention', async () => {
    const stream = new MemoryRunStream([admitted() as { type: string; data: unknown }]);
    const guard = new AnsweringGuard(() => allow);
    const effects = new RecordingEffects(() => ({ ok: true, output: 'posted', summary: 'ok' }));
    const crashAfterPrepared = { afterAppend: (events: ReadonlyArray<{ type: string }>) => { if (events.some((event) => event.type === 'effect.prepared')) throw new Error('the replica died here'); } };
    const first = memoryPorts({ stream, model: new ScriptedModel([{ toolCalls: [post()] }], true), guard, effects, faults: crashAfterPrepared });
    await expect(new RunExecution(first, foldRun('run1', 'ws1', stream.events), pinnedRun(), { replica: 'r1', claim: 1 }).drive()).rejects.toThrow('the replica died here');
    expect(effects.calls).toEqual([]);

    const second = memoryPorts({ stream, model: new ScriptedModel([{ toolCalls: [finish] }], true), guard, effects });
    expect(await new RunExecution(second, foldRun('run1', 'ws1', stream.events), pinnedRun(), { replica: 'r2', claim: 2 }).drive()).toEqual({ status: 'terminal' });
    expect(effects.abandoned).toEqual(['run1:p1']);
    expect(effects.calls).toEqual([]);
    expect(stream.events.at(-1)).toMatchObject({ type: 'run.abandoned', data: { cause: 'uncertain_effect' } });
    expect(guard.raised).toMatchObject([{ kind: 'uncertain_effect' }]);
  });

  it('ends abandoned(transport_lost) when the link to a computer breaks mid-command: its command stopped, a person told, the receipt kept, nothing repeated', async () => {
    const detail = 'the link to computer "build-box" broke while the command ran: whether it finished is not known';
    const stream = new MemoryRunStream([admitted() as { type: string; data: unknown }]);
    const guard = new AnsweringGuard(() => ({ ...allow, computerGrant: 'signed-key-grant' }));
    const effects = new RecordingEffects(() => ({ ok: false, output: { state: 'lost' }, summary: `transport_lost: ${detail}`, error: { code: 'transport_lost', message: detail }, lost: { cause: 'transport_lost', detail } }));
    const budget = new LimitedBudget();
    const deploy = { id: 'x1', name: 'run_command', arguments: { command: 'make deploy', computer: 'build-box' }, rawArguments: '' };
    const ports = memoryPorts({ stream, model: new ScriptedModel([{ toolCalls: [deploy] }, { toolCalls: [finish] }], true), guard, effects, budget });

    expect(await new RunExecution(ports, foldRun('run1', 'ws1', stream.events), pinnedRun(), { replica: 'r1', claim: 1 }).drive()).toEqual({ status: 'terminal' });

    expect(guard.asked.map((planned) => planned.computer)).toEqual(['build-box']);
    expect(effects.calls).toEqual([{ tool: 'run_command', idempotencyKey: 'run1:x1', computerGrant: 'signed-key-grant' }]);
    expect(stream.types().slice(-5)).toEqual(['run.tool_decided', 'effect.prepared', 'effect.failed', 'run.tool_result', 'run.abandoned']);
    expect(stream.events.find((event) => event.type === 'effect.failed')?.data).toMatchObject({ outcomeKnown: false, error: { code: 'transport_lost' } });
    expect(stream.events.at(-1)).toMatchObject({ type: 'run.abandoned', data: { cause: 'transport_lost', attentionId: 'att-1', effect: { effectId: 'run1:x1', idempotencyKey: 'run1:x1' } } });
    expect(effects.abandoned).toEqual(['run1:x1']);
    expect(guard.raised).toMatchObject([{ kind: 'uncertain_effect', details: { cause: 'transport_lost', computer: 'build-box', detail, effectId: 'run1:x1' } }]);
    expect(budget.settled).toEqual(['res-action:x1']);
  });

  describe('at its own budget limit, with onExhausted: request', () => {
    const owner = { kind: 'user', id: 'owner-1' } as const;
    const expensive = () =>
      setUp({ turns: [{ toolCalls: [fetchCall], costUsd: 0.5 }, { toolCalls: [finish], costUsd: 0.1 }], pinned: pinnedRun({ budgets: { onExhausted: 'request' } }) });

    it('asks for more and waits; approved, the limit is raised once even when the drive dies before recording it, and the run finishes', async () => {
      const sut = expensive();
      expect(await sut.drive().drive()).toEqual({ status: 'waiting', waitingOn: 'budget-1' });
      expect(sut.stream.types().slice(-3)).toEqual(['run.checkpoint', 'run.budget_requested', 'run.waiting']);
      expect(sut.guard.budgetAsks).toEqual([{ request: 1, requestedUsd: 0.5, spentUsd: 0.5, limitUsd: 0.5, reason: 'the run has spent $0.500000 of its $0.5 limit' }]);

      sut.guard.budgetAnswers.set('budget-1', { state: 'approved', approvedBy: owner, role: 'member' });
      sut.stream.failNextAppend = new Error('the process died');
      await expect(sut.drive(2).drive()).rejects.toThrow('the process died');
      expect(sut.budget.raises.size).toBe(1);

      expect(await sut.drive(3).drive()).toEqual({ status: 'terminal' });
      expect(sut.budget.raises.size).toBe(1);
      expect(sut.budget.limitUsd).toBe(1);
      const raised = sut.stream.events.filter((event) => event.type === 'run.budget_raised');
      expect(raised.map((event) => event.data)).toEqual([
        { attentionId: 'budget-1', requestedUsd: 0.5, raisedUsd: 0.5, limitUsd: 1, approvedBy: owner, approverRole: 'member', cappedBy: null },
      ]);
      expect(sut.stream.types().at(-1)).toBe('run.succeeded');
    });

    it('ends budget_exhausted when the request is rejected, and raises nothing', async () => {
      const sut = expensive();
      await sut.drive().drive();
      sut.guard.budgetAnswers.set('budget-1', { state: 'rejected', approvedBy: null, role: null });

      expect(await sut.drive(2).drive()).toEqual({ status: 'terminal' });

      expect(sut.stream.types().at(-1)).toBe('run.budget_exhausted');
      expect(sut.budget.raises.size).toBe(0);
    });
  });
});
