import { eventually } from '@packetagent/testing';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { bearer } from './testing/app.testkit';
import { RecordingServer, startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

/** A person approves a run's call with edited arguments: the edit is checked against the grants, recorded, and is what runs. */
describe('approving a call with edited arguments', () => {
  let env: ExecutionApp;
  let far: RecordingServer;

  beforeAll(async () => {
    far = await new RecordingServer().start();
    env = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`] });
  });
  afterAll(async () => {
    await env?.close();
    await far?.close();
  });

  const approve = (attentionId: string, body: unknown) =>
    env.sut.request<{ code?: string; state?: string; edit?: unknown }>('POST', `/api/v1/workspaces/${env.ws}/attention/${attentionId}/approve`, { body, headers: bearer(env.owner) });

  it('refuses an edit outside the grant, leaving the attention open, and runs an edit inside it with the edit recorded', async () => {
    env.writeScript('editable', [
      'turns:',
      `  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/releases/draft", method: POST, body: "v1.2 draft" } }]`,
      '  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: release posted, met: true }] } }]',
    ].join('\n'));
    const deploymentId = await env.deploy(`apiVersion: packetagent/v1
kind: Worker
name: editable
model: { provider: scripted, model: editable }
instructions: Post the release.
tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/releases/*"], approval: { mode: always, deadline: 1h } }]
exit: { finish: { criteria: [release posted] } }
triggers:
  - { manual: {} }
`);
    const runId = await env.startRun(deploymentId);
    const open = await eventually(async () => {
      const list = await env.sut.request<{ items: Array<{ id: string; runId: string; rules?: unknown }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=open`, { headers: bearer(env.owner) });
      return list.body.items.find((item) => item.runId === runId);
    }, { what: 'the approval request' });
    expect(open.rules).toEqual({ mode: 'always', deadline: '1h' });

    const outside = await approve(open.id, { scope: 'once', arguments: { url: `${far.origin}/admin/wipe`, method: 'POST', body: 'x' } });
    expect(outside.status).toBe(403);
    expect(outside.body.code).toBe('edit_not_granted');
    const invalid = await approve(open.id, { scope: 'once', arguments: { url: `${far.origin}/releases/final`, method: 'FETCH' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('edit_invalid');
    expect(await env.runState(runId)).toBe('waiting');

    const inside = await approve(open.id, { scope: 'once', arguments: { url: `${far.origin}/releases/final`, method: 'POST', body: 'v1.2 final' } });
    expect(inside.status).toBe(200);
    expect(inside.body).toMatchObject({ state: 'approved', edit: { editor: { kind: 'api_key' } } });

    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    expect(far.requests.map((request) => [request.method, request.url, request.body])).toEqual([['POST', '/releases/final', 'v1.2 final']]);
    const events = await env.events(runId);
    const edited = events.find((event) => event.type === 'run.call_edited');
    expect(edited?.data).toMatchObject({ attentionId: open.id, arguments: { url: `${far.origin}/releases/final`, method: 'POST', body: 'v1.2 final' }, editor: { kind: 'api_key' } });
    const decisions = events.filter((event) => event.type === 'run.tool_decided').map((event) => [event.data['callDigest'], event.data['decision'], (event.data['reason'] as { code: string }).code]);
    expect(decisions).toEqual([
      [edited!.data['originalDigest'], 'approval_required', 'approval_required'],
      [edited!.data['originalDigest'], 'deny', 'approval_edited'],
      [edited!.data['editedDigest'], 'allow', 'approved_once'],
    ]);
    const result = events.find((event) => event.type === 'run.tool_result' && event.data['tool'] === 'http_fetch');
    expect(result?.data).toMatchObject({ ok: true, executed: true });
  });
});
