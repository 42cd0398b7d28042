import { isSuccess, runStateAfter, type AuthorizeResult } from '@packetagent/contracts';
import type { ToolOutcome } from '@packetagent/tools';
import type { ModelTurn } from '@packetagent/providers';
import {
  admitted,
  at,
  budgetRaised,
  budgetRequested as budgetRequestedGiven,
  checkpoint,
  claimed,
  commandCall,
  compacted,
  completed,
  criteriaSet,
  decided,
  deferred,
  failedUnknown,
  fetchCall,
  finishCall,
  given,
  history,
  modelTurn,
  pauseRequested,
  paused,
  pinnedRun,
  postCall,
  prepared,
  preparedCommand,
  resumeRequested,
  revokeRequested,
  running,
  stateOf,
  stopRequested,
  toolResult,
  waitingFor,
} from '../testing/run-scenario';
import {
  abandonLost,
  abandonUncertain,
  afterBudgetAnswer,
  afterBudgetRaised,
  afterBudgetRefusal,
  afterCredentialRefused,
  afterDecision,
  afterExecution,
  afterInterruption,
  afterModelTurn,
  afterQuestion,
  budgetRequested,
  decide,
  LOST_EFFECT_ATTEMPTS,
} from './run.decider';
import type { PlanRequest, RunIntent } from './run.intent';
import { foldRun, UnreplayableRunError } from './run.state';

const allow: AuthorizeResult = { decision: 'allow', reason: { code: 'granted', text: 'granted by tools[1]' } };
const approvalRequired: AuthorizeResult = { decision: 'approval_required', reason: { code: 'approval_required', text: 'approval: always' }, approvalId: 'att1' };
const deny = (code: AuthorizeResult['reason']['code'], text: string = code): AuthorizeResult => ({ decision: 'deny', reason: { code, text } });

function turn(calls: ModelTurn['toolCalls'], text = ''): ModelTurn {
  return { provider: 'scripted', model: 'script', scripted: true, text, toolCalls: calls, stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0, attempts: 1, durationMs: 1, native: null } as unknown as ModelTurn;
}
const request: PlanRequest = { iteration: 1, system: 's', messages: [], tools: [], maxOutputTokens: 10 };

function act(intent: RunIntent) {
  if (intent.kind !== 'act' && intent.kind !== 'ask') throw new Error(`expected act, got ${intent.kind}`);
  return intent;
}

describe('run decider: the loop', () => {
  it('does nothing more for a run that has ended', () => {
    given(running(), { type: 'run.cancelled', data: { reason: 'x' } }).when().then({ kind: 'done' });
  });

  it('stays idle while the run is deferred and not admitted', () => {
    given(deferred()).when().then({ kind: 'idle', waitingOn: null });
  });

  it('starts an admitted run with the bounds and budget of its definition, its deadline wall seconds from now', () => {
    const intent = given(admitted(), claimed()).when(at(0)).then({ kind: 'start', deadline: at(600).toISOString() });
    expect((intent as Extract<RunIntent, { kind: 'start' }>).events[0]).toMatchObject({
      type: 'run.started',
      data: { bounds: { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40, maxCostUsd: 0.5 }, exit: 'finish', tools: ['http_fetch', 'slack_post', 'ask_owner'] },
    });
  });

  it('records the definition\'s done-criteria when it starts', () => {
    const intent = given(admitted(), claimed()).when(at(0), pinnedRun({ criteria: ['every item has evidence'] })).intent as Extract<RunIntent, { kind: 'start' }>;
    expect(intent.events[1]).toEqual({ type: 'run.criteria_set', data: { criteria: ['every item has evidence'], reason: 'declared by the worker', callId: 'definition' } });
  });

  it('asks the model for the first turn of a started run, with the task first and the tools it was granted', () => {
    const intent = given(running()).when().then({ kind: 'plan', request: { iteration: 1, tools: ['http_fetch', 'slack_post', 'ask_owner'] } });
    const { request: planned } = intent as Extract<RunIntent, { kind: 'plan' }>;
    expect(planned.messages[0]).toEqual({ role: 'user', content: expect.stringContaining('2026.11.3') });
    expect(planned.system).toContain('call the `finish` tool');
  });

  it('nudges the model after a turn that called nothing', () => {
    const intent = given(running(), modelTurn(1, [], 'thinking'), checkpoint('plan')).when().then({ kind: 'plan', request: { iteration: 2 } });
    const { messages } = (intent as Extract<RunIntent, { kind: 'plan' }>).request;
    expect(messages[messages.length - 1]).toEqual({ role: 'user', content: 'Continue with the task. Call `finish` when it is done.' });
  });

  it('lists the current done-criteria in the system prompt', () => {
    const intent = given(running(), criteriaSet(['all items checked'])).when().intent as Extract<RunIntent, { kind: 'plan' }>;
    expect(intent.request.system).toContain('- all items checked');
  });

  it('asks for structured output when the exit is an output schema and the model supports it', () => {
    const schema = { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } };
    given(running()).when(at(1), pinnedRun({ outputSchema: schema, structuredOutput: true })).then({ kind: 'plan', request: { outputSchema: schema } });
    const plain = given(running()).when(at(1), pinnedRun({ outputSchema: schema, structuredOutput: false })).intent as Extract<RunIntent, { kind: 'plan' }>;
    expect(plain.request.outputSchema).toBeUndefined();
  });

  it('acts on the first pending call of the latest turn', () => {
    const intent = act(given(running(), modelTurn(1, [fetchCall('c1'), fetchCall('c2')]), checkpoint('plan')).when().intent);
    expect(intent).toMatchObject({ kind: 'act', call: { callId: 'c1' }, retry: null, planned: { tool: 'http_fetch', verb: 'GET', mutating: false } });
  });

  it('plans the next turn once every call of the turn has its result', () => {
    given(running(), modelTurn(1, [fetchCall('c1')]), checkpoint('plan'), toolResult('c1', 'http_fetch'), checkpoint('act')).when().then({ kind: 'plan', request: { iteration: 2 } });
  });

  it('decides the same from the same history, every time', () => {
    const events = [running(), modelTurn(1, [postCall('c2')]), checkpoint('plan')];
    expect(given(...events).when(at(5)).intent).toEqual(given(...events).when(at(5)).intent);
  });
});

describe('run decider: bounds and governors', () => {
  it('ends failed(iteration_limit) when every iteration is used', () => {
    given(running({ maxIterations: 1 }), modelTurn(1, [], 'x'), checkpoint('plan')).when().thenEnds('run.failed', { reason: 'iteration_limit' });
  });

  it('ends failed(tool_call_limit) when the next call would exceed the tool-call bound', () => {
    given(running({ maxToolCalls: 1 }), modelTurn(1, [fetchCall('c1'), fetchCall('c2')]), toolResult('c1', 'http_fetch'))
      .when()
      .thenEnds('run.failed', { reason: 'tool_call_limit' });
  });

  it('does not count a refused or corrected call against the tool-call bound', () => {
    given(running({ maxToolCalls: 1 }), modelTurn(1, [fetchCall('c1'), fetchCall('c2')]), toolResult('c1', 'http_fetch', false, false)).when().then({ kind: 'act', call: { callId: 'c2' } });
  });

  it('ends timed_out at the deadline, before anything else is tried', () => {
    given(running({ maxWallSeconds: 60 }), modelTurn(1, [fetchCall('c1')])).when(at(60)).thenEnds('run.timed_out', { deadline: at(60).toISOString() });
  });

  it('ends timed_out even while paused', () => {
    given(running({ maxWallSeconds: 60 }), pauseRequested(), paused()).when(at(61)).thenEnds('run.timed_out');
  });

  it('ends budget_exhausted once the run has spent its per-run limit', () => {
    given(running({ maxCostUsd: 0.01 }), modelTurn(1, [], 'x', 0.02), checkpoint('plan')).when().thenEnds('run.budget_exhausted', { scope: null });
  });

  it('goes on while spend is under the per-run limit', () => {
    given(running({ maxCostUsd: 0.05 }), modelTurn(1, [], 'x', 0.02), checkpoint('plan')).when().then({ kind: 'plan' });
  });

  it('compacts older turns once the transcript nears the model\'s window', () => {
    const long = 'x'.repeat(4_000);
    const events = [running(), modelTurn(1, [], long), modelTurn(2, [], long), modelTurn(3, [], long), modelTurn(4, [], long)];
    given(...events).when(at(1), pinnedRun({ contextWindow: 9_000, stallTurns: 10 })).then({ kind: 'record', events: [{ type: 'run.compacted', data: { droppedMessages: 2 } }] });
  });

  it('compacts at most once per turn: after a compaction the model is asked if the request fits the window', () => {
    const long = 'x'.repeat(4_000);
    const events = [running(), modelTurn(1, [], long), modelTurn(2, [], long), modelTurn(3, [], long), modelTurn(4, [], long), compacted(2)];
    given(...events).when(at(1), pinnedRun({ contextWindow: 9_000, stallTurns: 10 })).then({ kind: 'plan' });
  });

  it('ends failed(context_exhausted) when even the compacted request does not fit', () => {
    const events = [running(), modelTurn(1, [], 'x'), modelTurn(2, [], 'x'.repeat(40_000)), compacted(1)];
    given(...events).when(at(1), pinnedRun({ contextWindow: 5_000 })).thenEnds('run.failed', { reason: 'context_exhausted' });
  });

  it('ends failed(stalled) when the model makes no progress for the stall limit of turns', () => {
    const state = stateOf(running(), modelTurn(1, [], 'a'), modelTurn(2, [], 'b'));
    const outcome = afterModelTurn(state, pinnedRun({ stallTurns: 3 }), { ...request, iteration: 3 }, turn([], 'c'));
    expect(outcome.kind).toBe('end');
    expect(outcome.events[1]).toMatchObject({ type: 'run.failed', data: { reason: 'stalled' } });
  });

  it('records a turn with calls and closes the plan phase with a checkpoint', () => {
    const outcome = afterModelTurn(stateOf(running()), pinnedRun(), request, turn([{ id: 'c1', name: 'http_fetch', arguments: { url: 'https://ci.example.com/x' }, rawArguments: '' }] as ModelTurn['toolCalls']));
    expect(outcome).toMatchObject({ kind: 'record', checkpoint: 'plan', events: [{ type: 'run.model_turn', data: { iteration: 1, toolCalls: [{ id: 'c1', name: 'http_fetch' }] } }] });
  });
});

describe('run decider: operator controls', () => {
  it('ends cancelled with the reason of a recorded stop', () => {
    given(running(), modelTurn(1, [fetchCall()]), stopRequested('enough')).when().thenEnds('run.cancelled', { reason: 'enough' });
  });

  it('says the run was stopped by an operator when the stop gave no reason', () => {
    given(running(), stopRequested(null)).when().thenEnds('run.cancelled', { reason: 'stopped by an operator' });
  });

  it('ends a stopped run cancelled even before it started', () => {
    given(admitted(), stopRequested('not needed')).when().thenEnds('run.cancelled');
  });

  it('ends revoked when its deployment was revoked while it ran', () => {
    given(running(), modelTurn(1, [postCall()]), revokeRequested()).when().thenEnds('run.revoked', { reason: 'deployment revoked' });
  });

  it('lets a stop win over a revoke and the deadline', () => {
    given(running({ maxWallSeconds: 10 }), revokeRequested(), stopRequested('stop first')).when(at(20)).thenEnds('run.cancelled', { reason: 'stop first' });
  });

  it('parks a run whose pause was requested', () => {
    given(running(), modelTurn(1, [fetchCall()]), pauseRequested()).when().then({ kind: 'park', waitingOn: null, events: [{ type: 'run.waiting', data: { reason: 'paused' } }] });
  });

  it('stays parked while the pause holds', () => {
    given(running(), pauseRequested(), paused()).when().then({ kind: 'idle', waitingOn: null });
  });

  it('resumes a paused run once a resume is recorded, then goes on where it was', () => {
    given(running(), modelTurn(1, [fetchCall('c9')]), pauseRequested(), paused(), resumeRequested()).when().then({ kind: 'record', events: [{ type: 'run.resumed', data: { reason: 'resume_requested' } }] });
    given(running(), modelTurn(1, [fetchCall('c9')]), pauseRequested(), paused(), resumeRequested(), { type: 'run.resumed', data: { reason: 'resume_requested' } })
      .when()
      .then({ kind: 'act', call: { callId: 'c9' } });
  });

  it('pauses a run that waits for an approval without losing the call it waits on', () => {
    const events = [running(), modelTurn(1, [postCall('c2')]), decided('c2', 'slack_post', 'approval_required', 'att1'), waitingFor('c2', 'att1'), pauseRequested()];
    given(...events).when().then({ kind: 'park', events: [{ type: 'run.waiting', data: { reason: 'paused' } }] });
    expect(stateOf(...events).pending[0]?.callId).toBe('c2');
  });
});

describe('run decider: corrections and control tools', () => {
  it('answers malformed arguments with a correction that executes nothing', () => {
    given(running(), modelTurn(1, [{ id: 'm1', name: 'http_fetch', arguments: null, malformed: 'Unexpected token' }]))
      .when()
      .then({ kind: 'record', checkpoint: 'act', events: [{ type: 'run.tool_result', data: { callId: 'm1', ok: false, executed: false, summary: 'malformed arguments: correction sent' } }] });
  });

  it('ends failed(model_error) when the model sends malformed arguments again after corrections', () => {
    const bad = (id: string) => ({ id, name: 'http_fetch', arguments: null, malformed: 'bad' });
    given(running(), modelTurn(1, [bad('m1')]), toolResult('m1', 'http_fetch', false, false), modelTurn(2, [bad('m2')]), toolResult('m2', 'http_fetch', false, false), modelTurn(3, [bad('m3')]))
      .when()
      .thenEnds('run.failed', { reason: 'model_error' });
  });

  it('answers arguments that break the tool\'s schema with the problems, executing nothing', () => {
    given(running(), modelTurn(1, [{ id: 'c1', name: 'http_fetch', arguments: { url: 42 } }]))
      .when()
      .then({ kind: 'record', events: [{ type: 'run.tool_result', data: { ok: false, executed: false, summary: 'invalid arguments: correction sent' } }] });
  });

  it('answers a call to a tool that does not exist with the list of known tools', () => {
    const intent = given(running(), modelTurn(1, [{ id: 'c1', name: 'teleport', arguments: {} }])).when().intent as Extract<RunIntent, { kind: 'record' }>;
    expect(intent.events[0]).toMatchObject({ type: 'run.tool_result', data: { ok: false, output: expect.stringContaining('known tools') } });
  });

  it('refuses a finish that does not report every done-criterion as met, and the run goes on', () => {
    const events = [running(), criteriaSet(['every item has evidence']), modelTurn(1, [finishCall({ summary: 'done', criteria: [{ criterion: 'every item has evidence', met: false }] })])];
    given(...events).when().then({ kind: 'record', events: [{ type: 'run.tool_result', data: { ok: false, summary: 'finish refused', output: expect.stringContaining('criterion not met') } }] });
  });

  it('ends succeeded on a finish that reports every criterion met', () => {
    const events = [running(), criteriaSet(['every item has evidence']), modelTurn(1, [finishCall({ summary: 'all good', criteria: [{ criterion: 'every item has evidence', met: true }] })])];
    const intent = given(...events).when().thenEnds('run.succeeded', { summary: 'all good', output: null }) as Extract<RunIntent, { kind: 'end' }>;
    expect(intent.events[0]).toMatchObject({ type: 'run.tool_result', data: { tool: 'finish', ok: true } });
  });

  it('ends succeeded only with an output that matches the output schema', () => {
    const pinned = pinnedRun({ outputSchema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } } });
    given(running(), modelTurn(1, [finishCall({ summary: 's', output: { ok: 'yes' } })])).when(at(1), pinned).then({ kind: 'record', events: [{ data: { summary: 'finish refused' } }] });
    given(running(), modelTurn(1, [finishCall({ summary: 's', output: { ok: true } })])).when(at(1), pinned).thenEnds('run.succeeded', { output: { ok: true } });
  });

  it('ends succeeded when a text-only answer is JSON matching the output schema', () => {
    const pinned = pinnedRun({ outputSchema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } } });
    const outcome = afterModelTurn(stateOf(running()), pinned, request, turn([], '{"ok": true}'));
    expect(outcome).toMatchObject({ kind: 'end', events: [{ type: 'run.model_turn' }, { type: 'run.succeeded', data: { output: { ok: true } } }] });
  });

  it('sets proposed done-criteria once, and refuses a second proposal', () => {
    const propose = { id: 'p1', name: 'propose_criteria', arguments: { criteria: ['items checked'] } };
    given(running(), modelTurn(1, [propose])).when().then({ kind: 'record', events: [{ type: 'run.criteria_set', data: { criteria: ['items checked'], reason: null } }, { type: 'run.tool_result' }] });
    given(running(), criteriaSet(['already']), modelTurn(1, [propose])).when().then({ kind: 'record', events: [{ type: 'run.tool_result', data: { ok: false, summary: 'criteria already set' } }] });
  });

  it('changes done-criteria with update_criteria and its reason', () => {
    const update = { id: 'u1', name: 'update_criteria', arguments: { criteria: ['fewer items'], reason: 'scope changed' } };
    given(running(), criteriaSet(['old']), modelTurn(1, [update]))
      .when()
      .then({ kind: 'record', events: [{ type: 'run.criteria_set', data: { criteria: ['fewer items'], reason: 'scope changed' } }, { type: 'run.tool_result', data: { ok: true } }] });
  });

  it('asks the owner through policy for ask_owner', () => {
    given(running(), modelTurn(1, [{ id: 'q1', name: 'ask_owner', arguments: { question: 'Ship it?' } }])).when().then({ kind: 'ask', call: { callId: 'q1' } });
  });

  it('closes the act phase only with the result of the turn\'s last call', () => {
    const bad = { id: 'm1', name: 'http_fetch', arguments: null, malformed: 'bad' };
    const intent = given(running(), modelTurn(1, [bad, fetchCall('c2')])).when().intent as Extract<RunIntent, { kind: 'record' }>;
    expect(intent.checkpoint).toBeUndefined();
  });
});

describe('run decider: policy decisions', () => {
  const waitingRun = [running(), modelTurn(1, [postCall('c2')]), checkpoint('plan'), decided('c2', 'slack_post', 'approval_required', 'att1'), waitingFor('c2', 'att1')];
  const call = (events: Parameters<typeof stateOf>) => act(decide(stateOf(...events), pinnedRun(), at(1)));

  it('parks the run on an approval policy requires, naming the attention and the call', () => {
    const events = [running(), modelTurn(1, [postCall('c2')])];
    const intent = call(events);
    expect(afterDecision(stateOf(...events), intent.call, intent.planned, approvalRequired, null)).toMatchObject({
      kind: 'park',
      waitingOn: 'att1',
      events: [{ type: 'run.tool_decided', data: { decision: 'approval_required', attentionId: 'att1' } }, { type: 'run.waiting', data: { reason: 'approval', attentionId: 'att1', callId: 'c2' } }],
    });
  });

  it('records nothing when woken while the same approval is still open', () => {
    const intent = call(waitingRun);
    expect(afterDecision(stateOf(...waitingRun), intent.call, intent.planned, approvalRequired, null)).toEqual({ kind: 'idle', waitingOn: 'att1' });
  });

  it('resumes and prepares the effect once approved: a mutating call gets a receipt, its key and its budget reservation', () => {
    const intent = call(waitingRun);
    expect(afterDecision(stateOf(...waitingRun), intent.call, intent.planned, allow, null)).toMatchObject({
      kind: 'execute',
      reserveAction: true,
      events: [{ type: 'run.resumed', data: { reason: 'granted' } }, { type: 'run.tool_decided', data: { decision: 'allow' } }],
      effect: { effectId: 'run1:c2', idempotencyKey: 'run1:c2', attempt: 1, outcome: 'prepared', tool: 'slack_post' },
    });
  });

  it('runs an allowed read without an effect receipt', () => {
    const events = [running(), modelTurn(1, [fetchCall('c1')])];
    const intent = call(events);
    expect(afterDecision(stateOf(...events), intent.call, intent.planned, allow, null)).toMatchObject({ kind: 'execute', effect: null, reserveAction: false, events: [{ type: 'run.tool_decided' }] });
  });

  it('ends rejected, naming the attention, when the approval is rejected', () => {
    const intent = call(waitingRun);
    expect(afterDecision(stateOf(...waitingRun), intent.call, intent.planned, deny('approval_rejected', 'not today'), null)).toMatchObject({
      kind: 'end',
      events: [{ type: 'run.resumed' }, { type: 'run.tool_decided' }, { type: 'run.rejected', data: { attentionId: 'att1', reason: 'not today' } }],
    });
  });

  it('ends expired when the approval deadline passed', () => {
    const intent = call(waitingRun);
    expect(afterDecision(stateOf(...waitingRun), intent.call, intent.planned, deny('approval_expired'), null)).toMatchObject({ kind: 'end', events: [{}, {}, { type: 'run.expired', data: { attentionId: 'att1' } }] });
  });

  it('ends revoked when the deployment was revoked before the call, making no call', () => {
    const intent = call(waitingRun);
    const outcome = afterDecision(stateOf(...waitingRun), intent.call, intent.planned, deny('deployment_revoked', 'revoked'), null);
    expect(outcome).toMatchObject({ kind: 'end', events: [{}, {}, { type: 'run.revoked', data: { reason: 'revoked' } }] });
  });

  it('tells the model a plain denial and goes on', () => {
    const events = [running(), modelTurn(1, [fetchCall('c1', 'https://elsewhere.example.org/')])];
    const intent = call(events);
    expect(afterDecision(stateOf(...events), intent.call, intent.planned, deny('resource_not_granted', 'not granted'), null)).toMatchObject({
      kind: 'record',
      checkpoint: 'act',
      events: [{ type: 'run.tool_decided', data: { decision: 'deny' } }, { type: 'run.tool_result', data: { ok: false, executed: false, output: 'Denied by policy (resource_not_granted): not granted' } }],
    });
  });

  it('hands a rejected question back to the model as a "no" instead of ending the run', () => {
    const events = [running(), modelTurn(1, [{ id: 'q1', name: 'ask_owner', arguments: { question: 'Ship?' } }]), waitingFor('q1', 'att9', 'question')];
    const intent = act(decide(stateOf(...events), pinnedRun(), at(1)));
    expect(afterQuestion(stateOf(...events), intent.call, intent.planned, deny('approval_rejected', 'no'))).toMatchObject({
      kind: 'record',
      events: [{ type: 'run.resumed' }, { type: 'run.tool_decided' }, { type: 'run.tool_result', data: { output: { answered: false, reason: 'no' } } }],
    });
    expect(afterQuestion(stateOf(...events), intent.call, intent.planned, allow)).toMatchObject({ kind: 'record', events: [{}, {}, { data: { output: { answered: true, approved: true } } }] });
  });
});

describe('run decider: effect receipts and recovery', () => {
  const posting = [running(), modelTurn(1, [postCall('c2')]), checkpoint('plan'), decided('c2', 'slack_post', 'allow')];

  it('repeats a prepared effect with no recorded outcome when the tool is idempotent by key, as its next attempt', () => {
    const events = [...posting, prepared('c2', true)];
    const intent = act(decide(stateOf(...events), pinnedRun(), at(1)));
    expect(intent).toMatchObject({ kind: 'act', retry: { effectId: 'run1:c2', attempt: 1 } });
    expect(afterDecision(stateOf(...events), intent.call, intent.planned, allow, intent.kind === 'act' ? intent.retry : null)).toMatchObject({
      kind: 'execute',
      reserveAction: false,
      effect: { effectId: 'run1:c2', idempotencyKey: 'run1:c2', attempt: 2 },
    });
  });

  it('abandons a run whose prepared effect may not be repeated', () => {
    given(...posting, prepared('c2', false)).when().then({ kind: 'abandon', effect: { effectId: 'run1:c2', outcome: 'prepared', idempotentByKey: false } });
  });

  it('records the abandonment as uncertain_effect with the receipt and the attention raised', () => {
    const { effects } = stateOf(...posting, prepared('c2', false));
    expect(abandonUncertain(effects['run1:c2']!, 'att7')[0]).toMatchObject({
      type: 'run.abandoned',
      data: { cause: 'uncertain_effect', attentionId: 'att7', effect: { effectId: 'run1:c2', idempotencyKey: 'run1:c2' } },
    });
  });

  it('never repeats a completed effect: after its result the run plans its next turn', () => {
    given(...posting, prepared('c2', false), completed('c2'), toolResult('c2', 'slack_post'), checkpoint('act')).when().then({ kind: 'plan', request: { iteration: 2 } });
  });

  it('goes on after an effect cut off mid-call: its unknown outcome is recorded and the model told', () => {
    given(...posting, prepared('c2', false), failedUnknown('c2'), toolResult('c2', 'slack_post', false), checkpoint('act')).when().then({ kind: 'plan' });
  });

  it('does not repeat a model turn recorded before a crash: the recovered run acts on its calls', () => {
    given(running(), modelTurn(1, [fetchCall('c1')]), checkpoint('plan'), claimed(2)).when().then({ kind: 'act', call: { callId: 'c1' } });
  });

  it('writes the receipt and the result of an effect, and closes the act phase', () => {
    const state = stateOf(...posting, prepared('c2', true));
    const intent = act(decide(state, pinnedRun(), at(1)));
    const effect = state.effects['run1:c2']!;
    expect(afterExecution(state, intent.call, intent.planned, { ok: true, output: 'posted', summary: 'posted' }, effect)).toMatchObject({
      checkpoint: 'act',
      events: [{ type: 'effect.completed', data: { effectId: 'run1:c2' } }, { type: 'run.tool_result', data: { ok: true, executed: true } }],
    });
    expect(afterExecution(state, intent.call, intent.planned, { ok: false, output: 'no', summary: '500', error: { code: 'http_500', message: 'server error' } }, effect)).toMatchObject({
      events: [{ type: 'effect.failed', data: { outcomeKnown: true, error: { code: 'http_500' } } }, { type: 'run.tool_result', data: { ok: false } }],
    });
  });

  it('records an interrupted effect as of unknown outcome', () => {
    const state = stateOf(...posting, prepared('c2', true));
    const intent = act(decide(state, pinnedRun(), at(1)));
    expect(afterInterruption(intent.call, intent.planned, state.effects['run1:c2']!)).toMatchObject({
      checkpoint: 'act',
      events: [{ type: 'effect.failed', data: { outcomeKnown: false, error: { code: 'interrupted' } } }, { type: 'run.tool_result', data: { summary: 'interrupted' } }],
    });
  });

  it('quarantines a history whose checkpoint does not match the fold: it is never guessed at', () => {
    const events = history(running(), modelTurn(1, [fetchCall('c1')]), checkpoint('plan'));
    (events[events.length - 1]!.data as { stateDigest: string }).stateDigest = 'b'.repeat(64);
    expect(() => foldRun('run1', 'ws1', events)).toThrow(UnreplayableRunError);
  });
});

describe('run decider: the link to a computer lost mid-call', () => {
  const detail = 'the link to computer "build-box" broke while the command ran: whether it finished is not known';
  const lost: ToolOutcome = {
    ok: false,
    output: { state: 'lost', killConfirmed: false, error: { code: 'transport_lost', message: detail } },
    summary: `transport_lost: ${detail}`,
    error: { code: 'transport_lost', message: detail },
    lost: { cause: 'transport_lost', detail },
  };
  const deploying = [running(), modelTurn(1, [commandCall('c3')]), checkpoint('plan'), decided('c3', 'run_command', 'allow'), preparedCommand('c3')];

  it('plans a command on a computer with the computer it names', () => {
    given(running(), modelTurn(1, [commandCall('c3')])).when().then({ kind: 'act', planned: { tool: 'run_command', computer: 'build-box', mutating: true, idempotentByKey: false } });
  });

  it('records the outcome as not known, with the tool result, and gives the call up when it may not be repeated', () => {
    const state = stateOf(...deploying);
    // The call as it was acted on, before its receipt was written.
    const intent = act(decide(stateOf(running(), modelTurn(1, [commandCall('c3')])), pinnedRun(), at(1)));
    expect(afterExecution(state, intent.call, intent.planned, lost, state.effects['run1:c3']!)).toEqual({
      kind: 'abandon',
      effect: expect.objectContaining({ effectId: 'run1:c3', outcome: 'prepared' }),
      detail,
      events: [
        { type: 'effect.failed', data: { effectId: 'run1:c3', callId: 'c3', error: { code: 'transport_lost', message: detail }, outcomeKnown: false } },
        { type: 'run.tool_result', data: expect.objectContaining({ callId: 'c3', tool: 'run_command', ok: false, executed: true, summary: `transport_lost: ${detail}` }) },
      ],
    });
  });

  it('ends the run abandoned(transport_lost) with the effect\'s receipt and the attention raised, and decides nothing after', () => {
    const effect = stateOf(...deploying).effects['run1:c3']!;
    const ended = abandonLost(effect, detail, 'att9');
    expect(ended).toEqual([
      {
        type: 'run.abandoned',
        data: {
          cause: 'transport_lost',
          detail: `run_command exec: ${detail}; it is not idempotent by key, so it is not repeated`,
          effect: { effectId: 'run1:c3', callId: 'c3', tool: 'run_command', verb: 'exec', resource: 'make deploy', idempotencyKey: 'run1:c3', requestDigest: 'a'.repeat(64) },
          attentionId: 'att9',
        },
      },
    ]);
    const failed = { type: 'effect.failed', data: { effectId: 'run1:c3', callId: 'c3', error: { code: 'transport_lost', message: detail }, outcomeKnown: false } };
    const after = given(...deploying, failed, toolResult('c3', 'run_command', false), ...ended);
    after.when().then({ kind: 'done' });
    expect(after.state.terminalType).toBe('run.abandoned');
    expect(isSuccess(runStateAfter('run.abandoned')!)).toBe(false);
  });

  it('repeats an effect idempotent by key whose outcome was lost, as its next attempt, recording nothing first', () => {
    const events = [running(), modelTurn(1, [postCall('c2')]), checkpoint('plan'), decided('c2', 'slack_post', 'allow'), prepared('c2', true)];
    const state = stateOf(...events);
    const intent = act(decide(state, pinnedRun(), at(1)));
    expect(afterExecution(state, intent.call, intent.planned, lost, state.effects['run1:c2']!)).toEqual({ kind: 'retry' });
    given(...events).when().then({ kind: 'act', retry: { effectId: 'run1:c2', attempt: 1 } });
  });

  it('tells the model the outcome is not known once every attempt of an effect idempotent by key was lost', () => {
    const events = [running(), modelTurn(1, [postCall('c2')]), checkpoint('plan'), decided('c2', 'slack_post', 'allow'), prepared('c2', true, LOST_EFFECT_ATTEMPTS)];
    const state = stateOf(...events);
    const intent = act(decide(state, pinnedRun(), at(1)));
    expect(afterExecution(state, intent.call, intent.planned, lost, state.effects['run1:c2']!)).toMatchObject({
      kind: 'record',
      checkpoint: 'act',
      events: [{ type: 'effect.failed', data: { outcomeKnown: false, error: { code: 'transport_lost' } } }, { type: 'run.tool_result', data: { ok: false } }],
    });
  });
});

describe('run decider: a credential that needs an operator', () => {
  const refusal = { credential: 'tracker_oauth', reason: 'the authorization server refused the refresh (invalid_grant)' };
  const allowedCall = [running(), modelTurn(1, [postCall('c2')])];
  const parkedOnReconnect = [...allowedCall, decided('c2', 'slack_post', 'allow'), waitingFor('c2', 'att9', 'reconnect')];
  const outcome = (events: Parameters<typeof stateOf>, attention: { attentionId: string; state: 'open' | 'approved' | 'rejected' | 'expired' | 'withdrawn' }) => {
    const state = stateOf(...events);
    const intent = act(decide(state, pinnedRun(), at(1)));
    const before = [{ type: 'run.tool_decided', data: { callId: 'c2' } }] as never;
    return afterCredentialRefused(state, intent.call, before, refusal, attention);
  };

  it('parks the run on the attention asking to connect it again, naming the call', () => {
    expect(outcome(allowedCall, { attentionId: 'att9', state: 'open' })).toEqual({
      kind: 'park',
      waitingOn: 'att9',
      events: [{ type: 'run.tool_decided', data: { callId: 'c2' } }, { type: 'run.waiting', data: { reason: 'reconnect', attentionId: 'att9', callId: 'c2' } }],
    });
  });

  it('records nothing when woken while that attention is still open', () => {
    expect(outcome(parkedOnReconnect, { attentionId: 'att9', state: 'open' })).toEqual({ kind: 'idle', waitingOn: 'att9' });
  });

  it('ends failed(credential_unavailable), saying why, once the attention was answered and the credential is still refused', () => {
    for (const answered of ['rejected', 'expired', 'approved'] as const) {
      const ended = outcome(parkedOnReconnect, { attentionId: 'att9', state: answered });
      expect(ended).toMatchObject({ kind: 'end', events: [{ type: 'run.tool_decided' }, { type: 'run.failed', data: { reason: 'credential_unavailable' } }] });
      const detail = (ended as { events: Array<{ data: { detail?: string } }> }).events[1]!.data.detail;
      expect(detail).toContain('tracker_oauth');
      expect(detail).toContain('invalid_grant');
      expect(detail).toContain(answered);
    }
  });
});


describe('run decider: budget requests', () => {
  const requesting = pinnedRun({ budgets: { onExhausted: 'request' } });
  const owner = { kind: 'user', id: 'owner-1' } as const;
  const approved = { state: 'approved' as const, approvedBy: owner, role: 'member' as const };
  const spent = (usd: number) => [running({ maxCostUsd: 0.5 }), modelTurn(1, [], 'x', usd), checkpoint('plan')];
  const requestOf = (attentionId: string, request = 1) => stateOf(running(), ...budgetRequestedGiven(attentionId, request)).budgetRequest!;

  it('asks for the run\'s limit again, instead of ending, when the run spent its own limit and its budget says request', () => {
    given(...spent(0.5)).when(at(1), requesting).then({
      kind: 'request_budget',
      ask: { request: 1, requestedUsd: 0.5, spentUsd: 0.5, limitUsd: 0.5, reason: 'the run has spent $0.500000 of its $0.5 limit' },
    });
  });

  it('asks for requestStepUsd when the budget names one', () => {
    given(...spent(0.5)).when(at(1), pinnedRun({ budgets: { onExhausted: 'request', requestStepUsd: 0.2 } })).then({ kind: 'request_budget', ask: { requestedUsd: 0.2 } });
  });

  it('still ends budget_exhausted when the budget does not say request', () => {
    given(...spent(0.5)).when(at(1), pinnedRun({ budgets: { onExhausted: 'end' } })).thenEnds('run.budget_exhausted');
  });

  it('records the request and the wait on its attention', () => {
    expect(budgetRequested({ request: 1, requestedUsd: 0.5, spentUsd: 0.5, limitUsd: 0.5, reason: 'r' }, 'att-b1')).toEqual([
      { type: 'run.budget_requested', data: { attentionId: 'att-b1', request: 1, requestedUsd: 0.5, spentUsd: 0.5, limitUsd: 0.5, reason: 'r' } },
      { type: 'run.waiting', data: { reason: 'budget', attentionId: 'att-b1', callId: null } },
    ]);
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'));
    expect(state).toMatchObject({ status: 'waiting', waiting: { reason: 'budget', attentionId: 'att-b1' }, budgetRequests: 1 });
  });

  it('reads the answer of the request it waits on before anything else it could do', () => {
    given(...spent(0.5), ...budgetRequestedGiven('att-b1')).when(at(1), requesting).then({ kind: 'await_budget', request: { attentionId: 'att-b1', requestedUsd: 0.5 } });
  });

  it('stays idle while the request is open', () => {
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'));
    expect(afterBudgetAnswer(state, requestOf('att-b1'), { state: 'open', approvedBy: null, role: null })).toEqual({ kind: 'idle', waitingOn: 'att-b1' });
  });

  it('waits on the request again after a pause and resume while it was open', () => {
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'), pauseRequested(), paused(), resumeRequested(), { type: 'run.resumed', data: { reason: 'resume_requested' } });
    expect(decide(state, requesting, at(1))).toMatchObject({ kind: 'await_budget' });
    expect(afterBudgetAnswer(state, requestOf('att-b1'), { state: 'open', approvedBy: null, role: null })).toEqual({
      kind: 'park',
      events: [{ type: 'run.waiting', data: { reason: 'budget', attentionId: 'att-b1', callId: null } }],
      waitingOn: 'att-b1',
    });
  });

  it('asks the ledger to raise the limit by the requested amount once approved', () => {
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'));
    expect(afterBudgetAnswer(state, requestOf('att-b1'), approved)).toEqual({ kind: 'raise', amountMicroUsd: 500_000 });
  });

  it.each(['rejected', 'expired', 'withdrawn'] as const)('ends budget_exhausted when the request was %s', (answer) => {
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'));
    const outcome = afterBudgetAnswer(state, requestOf('att-b1'), { state: answer, approvedBy: null, role: null });
    expect(outcome).toMatchObject({ kind: 'end', events: [{ type: 'run.budget_exhausted', data: { detail: expect.stringContaining(`was ${answer}`) } }] });
  });

  it('records the raise with who approved it and resumes; the run then plans within the new limit', () => {
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'));
    const outcome = afterBudgetRaised(state, requestOf('att-b1'), approved, { raisedUsd: 0.5, limitUsd: 1, cappedBy: null });
    expect(outcome).toEqual({
      kind: 'record',
      events: [
        { type: 'run.budget_raised', data: { attentionId: 'att-b1', requestedUsd: 0.5, raisedUsd: 0.5, limitUsd: 1, approvedBy: owner, approverRole: 'member', cappedBy: null } },
        { type: 'run.resumed', data: { reason: 'budget_raised' } },
      ],
    });
    given(...spent(0.5), ...budgetRequestedGiven('att-b1'), budgetRaised('att-b1', 1), { type: 'run.resumed', data: { reason: 'budget_raised' } })
      .when(at(1), requesting)
      .then({ kind: 'plan', request: { iteration: 2 } });
  });

  it('asks again, as the next request, when the run spends the raised limit too', () => {
    given(...spent(0.5), ...budgetRequestedGiven('att-b1'), budgetRaised('att-b1', 1), { type: 'run.resumed', data: { reason: 'budget_raised' } }, modelTurn(2, [], 'y', 0.5), checkpoint('plan'))
      .when(at(1), requesting)
      .then({ kind: 'request_budget', ask: { request: 2, limitUsd: 1, spentUsd: 1 } });
  });

  it('ends budget_exhausted when the approval could raise nothing: the deployment or workspace had nothing left', () => {
    const state = stateOf(...spent(0.5), ...budgetRequestedGiven('att-b1'));
    const capped = { kind: 'deployment', id: 'dep1', unit: 'usd', window: 'day' };
    const outcome = afterBudgetRaised(state, requestOf('att-b1'), approved, { raisedUsd: 0, limitUsd: 0.5, cappedBy: capped });
    expect(outcome.kind).toBe('end');
    expect(outcome.events.map((event) => event.type)).toEqual(['run.budget_raised', 'run.budget_exhausted']);
    expect(outcome.events[1]).toMatchObject({ data: { scope: capped } });
  });

  it('asks for at least what the next model call lacks when the ledger refuses it for the run\'s own limit', () => {
    const state = stateOf(...spent(0.45));
    const refusal = { detail: 'run', scope: null, usage: { kind: 'run', unit: 'usd', reason: 'budget_exhausted', limit: 500_000, spent: 450_000, held: 0, requested: 600_000 } };
    expect(afterBudgetRefusal(state, requesting, refusal)).toMatchObject({ kind: 'request_budget', ask: { request: 1, requestedUsd: 0.55, spentUsd: 0.45, limitUsd: 0.5 } });
    expect(afterBudgetRefusal(state, pinnedRun(), refusal)).toMatchObject({ kind: 'end', events: [{ type: 'run.budget_exhausted' }] });
  });

  it.each([
    ['the deployment', { kind: 'deployment', unit: 'usd', reason: 'budget_exhausted' }],
    ['the workspace', { kind: 'workspace', unit: 'usd', reason: 'budget_exhausted' }],
    ['a tool count of the run', { kind: 'run', unit: 'count:slack_post', reason: 'budget_exhausted' }],
    ['a blocked run scope', { kind: 'run', unit: 'usd', reason: 'scope_blocked' }],
  ])('still ends budget_exhausted when the ledger refuses for %s', (_name, scope) => {
    const refusal = { detail: 'refused', scope: null, usage: { ...scope, limit: 1, spent: 1, held: 0, requested: 1 } };
    expect(afterBudgetRefusal(stateOf(...spent(0.1)), requesting, refusal)).toEqual({ kind: 'end', events: [{ type: 'run.budget_exhausted', data: { detail: 'refused', scope: null } }] });
  });

  it('refuses to replay a raise for a request the run never waited on', () => {
    expect(() => stateOf(...spent(0.5), budgetRaised('att-x', 1))).toThrow(UnreplayableRunError);
  });
});
