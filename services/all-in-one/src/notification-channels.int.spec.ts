import { randomBytes } from 'node:crypto';
import { eventually, startSlackApi, startSmtpServer, testCertificateAuthority, type TestSlackApi, type TestSmtpServer } from '@packetagent/testing';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { Webhook } from 'standardwebhooks';
import { bearer } from './testing/app.testkit';
import { FINISH_TURN, manualWorker, RecordingServer, startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SMTP_PASSWORD = `smtp-${randomBytes(12).toString('hex')}`;
const SLACK_TOKEN = `xoxb-${randomBytes(12).toString('hex')}`;

interface Hook {
  type: string;
  data: { run: { id: string }; attention: { id: string; kind: string } | null; budget: { scope: string } | null; actions: Array<{ action: string; url: string }> };
}


/**
 * Every channel against a real peer of its own: a Slack-compatible API on loopback (bot token,
 * chat.postMessage and chat.update), an SMTP server with STARTTLS and a test CA, and a webhook
 * receiver verifying Standard Webhooks signatures.
 */
describe('notifications through Slack, email and webhooks', () => {
  let env: ExecutionApp;
  let far: RecordingServer;
  let receiver: RecordingServer;
  let slack: TestSlackApi;
  let smtp: TestSmtpServer;

  const hooks = () =>
    receiver.requests
      .filter((request) => request.url === '/hook')
      .map((request) => new Webhook(WEBHOOK_SECRET).verify(request.body, request.headers as Record<string, string>) as Hook);
  const hooksOf = (runId: string, type: string) => hooks().filter((hook) => hook.data.run.id === runId && hook.type === `packetagent.${type}`);
  const put = async (name: string, value: string) => {
    const stored = await env.sut.request('PUT', `/api/v1/workspaces/${env.ws}/credentials/${name}`, { body: { value }, headers: bearer(env.owner) });
    expect(stored.status).toBe(200);
  };

  beforeAll(async () => {
    const ca = testCertificateAuthority(['localhost', '127.0.0.1']);
    far = await new RecordingServer().start();
    receiver = await new RecordingServer().start();
    slack = await startSlackApi({ token: SLACK_TOKEN, channels: { '#ops': 'C0OPS' } });
    smtp = await startSmtpServer({ certificate: ca.server, tls: 'starttls', users: { 'bot@example.com': SMTP_PASSWORD } });
    env = await startExecutionApp({
      allowPrivate: [`127.0.0.1:${far.port}`, `127.0.0.1:${receiver.port}`, slack.hostPort, `127.0.0.1:${smtp.port}`],
      env: { PACKETAGENT_NOTIFY_RETRY_BASE_MS: '50', PACKETAGENT_NOTIFY_RETRY_MAX_MS: '500' },
    });
    await put('ops_hook', JSON.stringify({ url: `${receiver.origin}/hook`, secret: WEBHOOK_SECRET }));
    await put('slack_bot', JSON.stringify({ botToken: SLACK_TOKEN, apiBaseUrl: slack.apiBaseUrl }));
    await put(
      'smtp',
      JSON.stringify({ host: '127.0.0.1', port: smtp.port, security: 'starttls', user: 'bot@example.com', password: SMTP_PASSWORD, from: 'PacketAgent <bot@example.com>', ca: ca.ca }),
    );
  });
  afterAll(async () => {
    await env?.close();
    await far?.close();
    await receiver?.close();
    await slack?.close();
    await smtp?.close();
  });

  it('sends an approval as a Slack card, an email and a webhook, reminds and escalates on time, and the mailed link resumes the run once', async () => {
    env.writeScript(
      'release',
      `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/release", method: POST, body: "v2" } }]\n${FINISH_TURN}`,
    );
    const deploymentId = await env.deploy(
      manualWorker(
        'release',
        `tools:
  - tool: http_fetch
    verbs: [POST]
    resources: ["${far.origin}/*"]
    approval: { mode: always, deadline: 10m, remindAfter: 2s, escalate: { after: 3s, to: lead } }
notifications:
  - { name: ops, on: [attention, progress, succeeded], channel: slack, credential: slack_bot, to: "#ops" }
  - { name: lead, on: [escalation], channel: email, credential: smtp, to: lead@example.com }
  - { name: hook, on: [attention, reminder], channel: webhook, credential: ops_hook }`,
      ),
    );
    const runId = await env.startRun(deploymentId);

    // The card: Block Kit with a URL button per control.
    const card = await eventually(() => slack.messages.find((message) => message.text.includes('needs an approval')), { what: 'the Slack card' });
    expect(JSON.stringify(card.blocks)).toContain('/api/v1/callbacks/');
    const [attentionHook] = await eventually(() => hooksOf(runId, 'attention').length > 0 && hooksOf(runId, 'attention'), { what: 'the attention webhook' });
    expect(attentionHook!.data.actions.map((action) => action.action)).toEqual(['approve', 'reject', 'open']);

    // Reminder at 2 s to the webhook route, escalation at 3 s by mail to the route it names: awaited, not slept.
    await eventually(() => hooksOf(runId, 'reminder').length === 1, { what: 'the reminder', timeoutMs: 20_000 });
    const mail = await eventually(() => smtp.received.find((received) => received.to.includes('lead@example.com')), { what: 'the escalation mail', timeoutMs: 20_000 });
    expect(mail.secure).toBe(true);
    expect(mail.subject).toContain('Escalated');
    expect(await env.runState(runId)).toBe('waiting');

    const approveUrl = /Approve: (\S+)/.exec(mail.text ?? '')?.[1];
    expect(approveUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/callbacks\/[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
    const approved = await env.sut.request('POST', new URL(approveUrl!).pathname, { body: {} });
    expect(approved.status).toBe(200);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const replay = await env.sut.request<{ code: string }>('POST', new URL(approveUrl!).pathname, { body: {} });
    expect(replay.status).toBe(409);
    expect(far.requests.filter((request) => request.url === '/release')).toHaveLength(1);

    // Progress went to one Slack message, edited in place up to the outcome; the card stayed apart.
    const progress = await eventually(() => slack.messages.find((message) => message.text.includes('succeeded')), { what: 'the outcome on Slack' });
    expect(progress.edits).toBeGreaterThanOrEqual(1);
    expect(slack.calls.filter((call) => call.method === 'chat.update').length).toBeGreaterThanOrEqual(1);
    expect(slack.calls.every((call) => call.authorization === `Bearer ${SLACK_TOKEN}`)).toBe(true);
    expect(hooksOf(runId, 'reminder')).toHaveLength(1);
    expect(smtp.received.filter((received) => received.to.includes('lead@example.com'))).toHaveLength(1);
  });

  it('needs two distinct approvers out of three recipients under a quorum of two', async () => {
    env.writeScript('quorum', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/quorum", method: POST, body: "x" } }]\n${FINISH_TURN}`);
    const routes = [0, 1, 2].map((index) => `  - { name: approver-${index}, on: [attention], channel: webhook, credential: ops_hook }`).join('\n');
    const deploymentId = await env.deploy(
      manualWorker('quorum', `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: { mode: always, quorum: 2 } }]\nnotifications:\n${routes}`),
    );
    const runId = await env.startRun(deploymentId);
    const sent = await eventually(() => hooksOf(runId, 'attention').length === 3 && hooksOf(runId, 'attention'), { what: 'three attention webhooks' });
    const approveOf = (hook: Hook) => new URL(hook.data.actions.find((action) => action.action === 'approve')!.url).pathname;

    expect((await env.sut.request('POST', approveOf(sent[0]!), { body: {} })).status).toBe(200);
    const attention = await env.sut.request<{ state: string; approvals: unknown[] }>('GET', `/api/v1/workspaces/${env.ws}/attention/${sent[0]!.data.attention!.id}`, { headers: bearer(env.owner) });
    expect(attention.body).toMatchObject({ state: 'open', approvals: [expect.objectContaining({ actor: { kind: 'remote_control', id: expect.stringMatching(/^webhook:route-[012]$/) } })] });
    expect(await env.runState(runId)).toBe('waiting');

    expect((await env.sut.request('POST', approveOf(sent[1]!), { body: {} })).status).toBe(200);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    const late = await env.sut.request<{ code: string }>('POST', approveOf(sent[2]!), { body: {} });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe('attention_already_answered');
    expect(far.requests.filter((request) => request.url === '/quorum')).toHaveLength(1);
  });

  it('announces the budget warning once per scope, and an approved budget request lets the run finish', async () => {
    env.writeScript(
      'spender',
      [
        'pricing: { inputPerMTokUsd: 0, outputPerMTokUsd: 100 }',
        'turns:',
        '  - { text: thinking, usage: { inputTokens: 10, outputTokens: 1000 } }',
        '  - { toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }], usage: { inputTokens: 10, outputTokens: 1000 } }',
        '',
      ].join('\n'),
    );
    const deploymentId = await env.deploy(
      manualWorker('spender', `budgets: { perRunUsd: 0.5, onExhausted: request }\nnotifications:\n  - { on: [attention, budget_warning], channel: webhook, credential: ops_hook }`),
    );
    const runId = await env.startRun(deploymentId);
    const [request] = await eventually(() => {
      const asked = hooksOf(runId, 'attention').filter((hook) => hook.data.attention?.kind === 'budget_request');
      return asked.length > 0 && asked;
    }, { what: 'the budget request' });
    const approve = new URL(request!.data.actions.find((action) => action.action === 'approve')!.url).pathname;
    expect((await env.sut.request('POST', approve, { body: {} })).status).toBe(200);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');

    const warnings = await eventually(() => hooksOf(runId, 'budget_warning').length > 0 && hooksOf(runId, 'budget_warning'), { what: 'the budget warning' });
    const { rows } = await env.sut.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM notifications.deliveries WHERE run_id = $1 AND trigger = 'budget_warning' AND state <> 'dead'`,
      [runId],
    );
    expect(Number(rows[0]!.n)).toBe(warnings.length);
    expect(new Set(warnings.map((warning) => warning.data.budget!.scope)).size).toBe(warnings.length);
    expect(warnings.map((warning) => warning.data.budget!.scope)).toContain('run:run');
  });

  it('never records the Slack token, the SMTP password or the signing secret', async () => {
    const secrets = [SLACK_TOKEN, SMTP_PASSWORD, WEBHOOK_SECRET.slice(6, 30)];
    for (const query of [
      'SELECT data::text || metadata::text AS t FROM events',
      'SELECT row_to_json(d)::text AS t FROM notifications.deliveries d',
      'SELECT row_to_json(c)::text AS t FROM notifications.callbacks c',
      'SELECT row_to_json(t)::text AS t FROM notifications.threads t',
    ]) {
      const { rows } = await env.sut.db.pool.query<{ t: string }>(query);
      for (const secret of secrets) expect(rows.filter((row) => row.t.includes(secret))).toEqual([]);
    }
  });
});
