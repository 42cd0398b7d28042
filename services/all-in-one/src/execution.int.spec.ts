import { eventually } from '@packetagent/testing';
import { runStreamId, TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { bearer } from './testing/app.testkit';
import { healthReportExample, RecordingServer, startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

function worker(name: string, body: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Do the task.
${body}
triggers:
  - { manual: {} }
`;
}

describe('run execution', () => {
  let env: ExecutionApp;
  let far: RecordingServer;

  beforeAll(async () => {
    far = await new RecordingServer().start();
    env = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`], env: { PACKETAGENT_SLACK_WEBHOOK_BASE_URL: far.origin } });
  });
  afterAll(async () => {
    await env?.close();
    await far?.close();
  });
  beforeEach(() => {
    far.requests.length = 0;
    far.hold = null;
  });

  const approveOpen = async (runId: string) => {
    const open = await eventually(async () => {
      const list = await env.sut.request<{ items: Array<{ id: string; runId: string }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=open`, { headers: bearer(env.owner) });
      return list.body.items.find((item) => item.runId === runId);
    }, { what: 'the approval request' });
    const approved = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${open.id}/approve`, { body: { scope: 'once' }, headers: bearer(env.owner) });
    expect(approved.status).toBe(200);
    return open.id;
  };

  it('runs the example end to end: fetches, waits for approval, posts once, finishes, with every step as an event', async () => {
    const example = healthReportExample(env.port);
    env.writeScript('health-report', example.script);
    const stored = await env.sut.request('PUT', `/api/v1/workspaces/${env.ws}/credentials/ops_webhook`, {
      body: { value: 'https://hooks.slack.com/services/T000/B000/secret-path' },
      headers: bearer(env.owner),
    });
    expect(stored.status).toBe(200);
    const deploymentId = await env.deploy(example.worker);
    const runId = await env.startRun(deploymentId);

    await env.waitForState(runId, ['waiting']);
    expect(far.requests).toEqual([]);
    await approveOpen(runId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');

    expect(far.requests).toHaveLength(1);
    expect(far.requests[0]).toMatchObject({ method: 'POST', url: '/services/T000/B000/secret-path' });
    expect(JSON.parse(far.requests[0]!.body)).toMatchObject({ text: 'PacketAgent at 127.0.0.1:8484 is healthy.' });

    const events = await env.events(runId);
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type === 'run.model_turn')).toHaveLength(3);
    expect(types).toEqual(expect.arrayContaining(['run.admitted', 'run.claimed', 'run.started', 'run.tool_decided', 'run.waiting', 'run.resumed', 'effect.prepared', 'effect.completed', 'run.checkpoint', 'run.succeeded']));
    expect(types.indexOf('effect.prepared')).toBeLessThan(types.indexOf('effect.completed'));
    const decisions = events.filter((event) => event.type === 'run.tool_decided').map((event) => [event.data['tool'], event.data['decision']]);
    expect(decisions).toEqual([
      ['http_fetch', 'allow'],
      ['slack_post', 'approval_required'],
      ['slack_post', 'allow'],
    ]);
    const turns = events.filter((event) => event.type === 'run.model_turn');
    expect(turns.every((turn) => (turn.data['model'] as { scripted: boolean }).scripted)).toBe(true);
    const cost = turns.reduce((sum, turn) => sum + (turn.data['costUsd'] as number), 0);
    // 1730 input and 139 output tokens at $3 and $15 per million.
    expect(cost).toBeCloseTo((1730 * 3 + 139 * 15) / 1e6, 9);
    const checkpoints = events.filter((event) => event.type === 'run.checkpoint').map((event) => event.data);
    expect(checkpoints.length).toBeGreaterThanOrEqual(4);
    checkpoints.forEach((checkpoint, index) => {
      expect(checkpoint['seq']).toBe(index + 1);
      expect(checkpoint['previousDigest']).toBe(index === 0 ? null : checkpoints[index - 1]!['digest']);
    });
    const everything = JSON.stringify(events);
    expect(everything).not.toContain('secret-path');
    const usage = await env.sut.request<{ scopes: Array<{ kind: string; unit: string; spent: number }> }>('GET', `/api/v1/workspaces/${env.ws}/budgets?kind=run&id=${runId}`, { headers: bearer(env.owner) });
    expect(usage.body.scopes).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'run', unit: 'usd', spent: Math.round(cost * 1e6) })]));
  });

  it('ends a run that uses all its iterations as failed(iteration_limit)', async () => {
    env.writeScript('loops', `turns:\n${'  - toolCalls: [{ name: propose_criteria, arguments: { criteria: [x] } }]\n'.repeat(4)}`);
    const deploymentId = await env.deploy(worker('loops', 'tools: [{ tool: propose_criteria, approval: never }]\nbounds: { maxIterations: 2 }\nexit: { finish: { criteria: [done] } }'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('failed');
    expect((await env.events(runId)).at(-1)).toMatchObject({ type: 'run.failed', data: { reason: 'iteration_limit' } });
  });

  it('ends a run that uses all its tool calls as failed(tool_call_limit)', async () => {
    const call = `{ name: http_fetch, arguments: { url: "${far.origin}/a" } }`;
    env.writeScript('busy', `turns:\n  - toolCalls: [${call}, ${call}]\n  - toolCalls: [${call}]\n`);
    const deploymentId = await env.deploy(worker('busy', `tools: [{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }]\nbounds: { maxToolCalls: 1 }\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('failed');
    expect((await env.events(runId)).at(-1)).toMatchObject({ type: 'run.failed', data: { reason: 'tool_call_limit' } });
    expect(far.requests).toHaveLength(1);
  });

  it('ends a run whose next model call does not fit its cost budget as budget_exhausted', async () => {
    env.writeScript('spender', `pricing: { inputPerMTokUsd: 1000, outputPerMTokUsd: 1000 }\nturns:\n${'  - { text: thinking, usage: { inputTokens: 20000, outputTokens: 1000 } }\n'.repeat(3)}`);
    const deploymentId = await env.deploy(worker('spender', 'tools: []\nbudgets: { perRunUsd: 1 }\nexit: { finish: { criteria: [done] } }'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('budget_exhausted');
  });

  describe('with onExhausted: request', () => {
    // Each call reserves its whole output allowance (4 096 tokens at $100/MTok, about $0.41) and costs $0.10.
    const script = [
      'pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 100 }',
      'turns:',
      '  - { text: thinking, usage: { inputTokens: 10, outputTokens: 1000 } }',
      '  - { toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }], usage: { inputTokens: 10, outputTokens: 1000 } }',
      '',
    ].join('\n');
    const requesting = (name: string) => worker(name, 'tools: []\nbudgets: { perRunUsd: 0.5, onExhausted: request }\nexit: { finish: { criteria: [done] } }');

    const budgetRequestOf = (runId: string) =>
      eventually(async () => {
        const list = await env.sut.request<{ items: Array<{ id: string; runId: string; arguments: { kind: string; evidence: Record<string, unknown> } }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=open`, {
          headers: bearer(env.owner),
        });
        return list.body.items.find((item) => item.runId === runId && item.arguments.kind === 'budget_request');
      }, { what: 'the budget request' });

    it('asks for more when the next model call would pass the run\'s limit; approved, the limit is raised and the run finishes within it', async () => {
      env.writeScript('budget-asker', script);
      const runId = await env.startRun(await env.deploy(requesting('budget-asker')));

      const request = await budgetRequestOf(runId);
      expect(request.arguments.evidence).toMatchObject({ request: 1, requestedUsd: 0.5, spentUsd: 0.1, limitUsd: 0.5, reason: expect.stringContaining('the next model call needs') });
      expect(await env.waitForState(runId, ['waiting'])).toBe('waiting');
      const approved = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${request.id}/approve`, { body: { scope: 'once' }, headers: bearer(env.owner) });
      expect(approved.status).toBe(200);

      expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
      const events = await env.events(runId);
      const types = events.map((event) => event.type);
      expect(types.filter((type) => type.startsWith('run.budget'))).toEqual(['run.budget_requested', 'run.budget_raised']);
      expect(events.find((event) => event.type === 'run.waiting')).toMatchObject({ data: { reason: 'budget', attentionId: request.id } });
      expect(events.find((event) => event.type === 'run.budget_raised')).toMatchObject({ data: { attentionId: request.id, raisedUsd: 0.5, limitUsd: 1 } });
      const usage = await env.sut.request<{ scopes: Array<{ kind: string; unit: string; limit: number; spent: number }> }>('GET', `/api/v1/workspaces/${env.ws}/budgets?kind=run&id=${runId}`, {
        headers: bearer(env.owner),
      });
      expect(usage.body.scopes.find((scope) => scope.unit === 'usd')).toMatchObject({ limit: 1_000_000, spent: 200_000 });
    });

    it('ends budget_exhausted when the budget request is rejected', async () => {
      env.writeScript('refused-asker', script);
      const runId = await env.startRun(await env.deploy(requesting('refused-asker')));

      const request = await budgetRequestOf(runId);
      await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${request.id}/reject`, { body: { reason: 'not this month' }, headers: bearer(env.owner) });

      expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('budget_exhausted');
      const events = await env.events(runId);
      expect(events.map((event) => event.type)).not.toContain('run.budget_raised');
      expect(events.at(-1)).toMatchObject({ type: 'run.budget_exhausted', data: { detail: expect.stringContaining('was rejected') } });
    });
  });

  it('ends a run past its wall time as timed_out, cutting the model call in flight', async () => {
    env.writeScript('slow', 'turns:\n  - { text: thinking, delayMs: 60000 }\n');
    const deploymentId = await env.deploy(worker('slow', 'tools: []\nbounds: { maxWallSeconds: 1 }\nexit: { finish: { criteria: [done] } }'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('timed_out');
  });

  it('cancels a run within 2 s of a stop during a long tool call, recording the cut-off effect as of unknown outcome', async () => {
    far.hold = () => true;
    env.writeScript('poster', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/slow", method: POST, body: "x" } }]\n`);
    const deploymentId = await env.deploy(worker('poster', `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: never }]\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    await eventually(() => far.requests.length === 1, { what: 'the call to be in flight' });
    const stoppedAt = Date.now();
    const stop = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/stop`, { body: {}, headers: bearer(env.owner) });
    expect(stop.status).toBe(200);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('cancelled');
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    const events = await env.events(runId);
    expect(events.find((event) => event.type === 'effect.failed')).toMatchObject({ data: { outcomeKnown: false, error: { code: 'interrupted' } } });
  });

  it('pauses a run between steps and goes on where it was after resume', async () => {
    const fetch = `{ name: http_fetch, arguments: { url: "${far.origin}/page" } }`;
    far.hold = (request) => request.url === '/page' && far.requests.length === 1;
    env.writeScript('pausable', `turns:\n  - toolCalls: [${fetch}]\n  - toolCalls: [${fetch}]\n  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]\n`);
    const deploymentId = await env.deploy(worker('pausable', `tools: [{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }]\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    await eventually(() => far.requests.length === 1, { what: 'the first call to be in flight' });
    await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/pause`, { body: {}, headers: bearer(env.owner) });
    expect(await env.waitForState(runId, ['waiting'])).toBe('waiting');
    await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/resume`, { body: {}, headers: bearer(env.owner) });
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const types = (await env.events(runId)).map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['run.pause_requested', 'run.waiting', 'run.resume_requested', 'run.resumed', 'run.succeeded']));
  });

  it('ends a run waiting for approval as revoked when its deployment is revoked, without making the call', async () => {
    env.writeScript('guarded', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/x", method: POST, body: "y" } }]\n`);
    const deploymentId = await env.deploy(worker('guarded', `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, ['waiting']);
    const revoked = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/deployments/${deploymentId}/revoke`, { body: { reason: 'compromised credentials' }, headers: bearer(env.owner) });
    expect(revoked.status).toBe(200);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('revoked');
    expect(far.requests).toEqual([]);
  });

  it('ends a run as rejected when its approval is rejected', async () => {
    env.writeScript('refused', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/x", method: POST, body: "y" } }]\n`);
    const deploymentId = await env.deploy(worker('refused', `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    const open = await eventually(async () => {
      const list = await env.sut.request<{ items: Array<{ id: string; runId: string }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=open`, { headers: bearer(env.owner) });
      return list.body.items.find((item) => item.runId === runId);
    }, { what: 'the approval request' });
    await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${open.id}/reject`, { body: { reason: 'not today' }, headers: bearer(env.owner) });
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('rejected');
    expect(far.requests).toEqual([]);
  });

  it('refuses a finish that does not report every done-criterion as met, and the run goes on', async () => {
    env.writeScript('criteria', [
      'turns:',
      '  - toolCalls: [{ name: finish, arguments: { summary: early } }]',
      '  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: report written, met: true }] } }]',
    ].join('\n'));
    const deploymentId = await env.deploy(worker('criteria', 'tools: []\nexit: { finish: { criteria: [report written] } }'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const results = (await env.events(runId)).filter((event) => event.type === 'run.tool_result').map((event) => event.data['ok']);
    expect(results).toEqual([false, true]);
  });

  it('answers malformed tool arguments with one correction turn that executes nothing', async () => {
    env.writeScript('sloppy', [
      'turns:',
      '  - toolCalls: [{ name: http_fetch, arguments: "{not json" }]',
      '  - toolCalls: [{ name: finish, arguments: { summary: fixed, criteria: [{ criterion: done, met: true }] } }]',
    ].join('\n'));
    const deploymentId = await env.deploy(worker('sloppy', `tools: [{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }]\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const first = (await env.events(runId)).find((event) => event.type === 'run.tool_result');
    expect(first).toMatchObject({ data: { ok: false, executed: false } });
    expect(far.requests).toEqual([]);
  });

  it('ends a run whose model makes no progress for three turns as failed(stalled)', async () => {
    env.writeScript('idle', `turns:\n${'  - { text: "I am thinking about it." }\n'.repeat(4)}`);
    const deploymentId = await env.deploy(worker('idle', 'tools: []\nexit: { finish: { criteria: [done] } }'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('failed');
    expect((await env.events(runId)).at(-1)).toMatchObject({ type: 'run.failed', data: { reason: 'stalled' } });
  });

  it('finishes a run with an output schema only with an output that matches it', async () => {
    env.writeScript('structured', [
      'turns:',
      '  - toolCalls: [{ name: finish, arguments: { summary: first, output: { count: "three" } } }]',
      '  - toolCalls: [{ name: finish, arguments: { summary: second, output: { count: 3 } } }]',
    ].join('\n'));
    const deploymentId = await env.deploy(worker('structured', 'tools: []\nexit: { outputSchema: { type: object, required: [count], properties: { count: { type: integer } } } }'));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const events = await env.events(runId);
    expect(events.filter((event) => event.type === 'run.tool_result').map((event) => event.data['ok'])).toEqual([false, true]);
    expect(events.at(-1)).toMatchObject({ type: 'run.succeeded', data: { output: { count: 3 } } });
  });

  it('parks a run on ask_owner until a person answers, then hands the answer to the model', async () => {
    env.writeScript('asker', [
      'turns:',
      '  - toolCalls: [{ name: ask_owner, arguments: { question: "Ship it?" } }]',
      '  - toolCalls: [{ name: finish, arguments: { summary: asked, criteria: [{ criterion: done, met: true }] } }]',
    ].join('\n'));
    const deploymentId = await env.deploy(worker('asker', 'tools: [{ tool: ask_owner }]\nexit: { finish: { criteria: [done] } }'));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, ['waiting']);
    expect((await env.events(runId)).at(-1)).toMatchObject({ type: 'run.waiting', data: { reason: 'question' } });
    await approveOpen(runId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const answer = (await env.events(runId)).find((event) => event.type === 'run.tool_result');
    expect(answer).toMatchObject({ data: { tool: 'ask_owner', ok: true, output: { answered: true, approved: true } } });
  });

  it('compacts older turns near the model\'s context window and goes on', async () => {
    far.respond = () => ({ status: 200, body: 'x'.repeat(2_400) });
    const fetch = `{ name: http_fetch, arguments: { url: "${far.origin}/page" } }`;
    env.writeScript('chatty', `contextWindow: 4096\nturns:\n${`  - toolCalls: [${fetch}]\n`.repeat(6)}  - toolCalls: [{ name: finish, arguments: { summary: read, criteria: [{ criterion: done, met: true }] } }]\n`);
    const deploymentId = await env.deploy(
      worker('chatty', `tools: [{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }]\nexit: { finish: { criteria: [done] } }`).replace(
        'model: chatty }',
        'model: chatty, maxOutputTokens: 256 }',
      ),
    );
    const runId = await env.startRun(deploymentId);
    try {
      expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    } finally {
      far.respond = () => ({ status: 200, body: 'ok' });
    }
    expect((await env.events(runId)).some((event) => event.type === 'run.compacted')).toBe(true);
  });

  it('ends a run as failed(context_exhausted) when even its latest turn does not fit the window', async () => {
    far.respond = () => ({ status: 200, body: 'y'.repeat(30_000) });
    env.writeScript('flooded', `contextWindow: 4096\nturns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/huge" } }]\n  - { text: never reached }\n`);
    const deploymentId = await env.deploy(
      worker('flooded', `tools: [{ tool: http_fetch, verbs: [GET], resources: ["${far.origin}/*"], approval: never }]\nexit: { finish: { criteria: [done] } }`).replace(
        'model: flooded }',
        'model: flooded, maxOutputTokens: 256 }',
      ),
    );
    const runId = await env.startRun(deploymentId);
    try {
      expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('failed');
    } finally {
      far.respond = () => ({ status: 200, body: 'ok' });
    }
    expect((await env.events(runId)).at(-1)).toMatchObject({ type: 'run.failed', data: { reason: 'context_exhausted' } });
  });

  it('quarantines a run whose stored history was tampered with, and does nothing more for it', async () => {
    env.writeScript('tampered', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/x", method: POST, body: "y" } }]\n`);
    const deploymentId = await env.deploy(worker('tampered', `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]\nexit: { finish: { criteria: [done] } }`));
    const runId = await env.startRun(deploymentId);
    await env.waitForState(runId, ['waiting']);
    const client = await env.sut.db.pool.connect();
    try {
      await client.query("SET session_replication_role = 'replica'");
      await client.query(`UPDATE events SET data = jsonb_set(data, '{text}', '"edited"') WHERE stream_id = $1 AND type = 'run.model_turn'`, [runStreamId(runId)]);
      await client.query("SET session_replication_role = 'origin'");
    } finally {
      client.release();
    }
    await approveOpen(runId);
    const quarantined = await eventually(async () => {
      const { rows } = await env.sut.db.pool.query<{ status: string; quarantine_reason: string }>('SELECT status, quarantine_reason FROM supervisor.runs WHERE run_id = $1', [runId]);
      return rows[0]?.status === 'quarantined' && rows[0];
    }, { what: 'the run to be quarantined' });
    expect(quarantined.quarantine_reason).toMatch(/does not match its digest/);
    const inbox = await eventually(async () => {
      const list = await env.sut.request<{ items: Array<{ runId: string; tool: string; arguments: { kind?: string } }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=open`, { headers: bearer(env.owner) });
      return list.body.items.find((item) => item.runId === runId && item.tool === 'supervisor');
    }, { what: 'the quarantine in the attention inbox' });
    expect(inbox.arguments).toMatchObject({ kind: 'run_quarantined' });
    expect(far.requests).toEqual([]);
    expect(await env.runState(runId)).toBe('waiting');
  });

  it('admits a held run when the run that held the deployment\'s only slot ends', async () => {
    env.writeScript('one-at-a-time', 'turns:\n  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]\n');
    const deploymentId = await env.deploy(worker('one-at-a-time', 'tools: []\nbounds: { maxConcurrentRuns: 1 }\nexit: { finish: { criteria: [done] } }'));
    const first = await env.startRun(deploymentId, { n: 1 });
    const second = await env.startRun(deploymentId, { n: 2 });
    expect(await env.waitForState(first, TERMINAL_RUN_STATES)).toBe('succeeded');
    expect(await env.waitForState(second, TERMINAL_RUN_STATES)).toBe('succeeded');
    const admitted = await env.sut.db.pool.query<{ stream_id: string; global_position: string }>(
      `SELECT stream_id, global_position FROM events WHERE type IN ('run.admitted', 'run.succeeded') AND stream_id = ANY($1) ORDER BY global_position`,
      [[runStreamId(first), runStreamId(second)]],
    );
    // The second run is admitted only after the first one ended.
    expect(admitted.rows.map((row) => row.stream_id)).toEqual([runStreamId(first), runStreamId(first), runStreamId(second), runStreamId(second)]);
  });

  it('reserves budget for priced model calls only: a model priced at zero costs no round trip to the ledger', async () => {
    const finish = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';
    env.writeScript('free', `pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 }\nturns:\n  - toolCalls: [${finish}]\n`);
    env.writeScript('priced', `turns:\n  - toolCalls: [${finish}]\n`);
    const free = await env.startRun(await env.deploy(worker('free', 'tools: []\nexit: { finish: { criteria: [done] } }')));
    const priced = await env.startRun(await env.deploy(worker('priced', 'tools: []\nexit: { finish: { criteria: [done] } }')));
    expect(await env.waitForState(free, TERMINAL_RUN_STATES)).toBe('succeeded');
    expect(await env.waitForState(priced, TERMINAL_RUN_STATES)).toBe('succeeded');
    const reservations = async (runId: string) =>
      Number((await env.sut.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'budget.reserved' AND data->>'runId' = $1`, [runId])).rows[0]!.n);
    expect(await reservations(free)).toBe(0);
    expect(await reservations(priced)).toBe(1);
  });
});
