import { randomBytes } from 'node:crypto';
import { eventually } from '@packetagent/testing';
import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { Webhook } from 'standardwebhooks';
import { bearer } from './testing/app.testkit';
import { FINISH_TURN, manualWorker, RecordingServer, startExecutionApp, type ExecutionApp, type RecordedRequest } from './testing/execution.testkit';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

interface Delivery {
  deliveryId: string;
  state: string;
  trigger: string;
  attempts: number;
  attemptLog: Array<{ outcome: string; status: number | null; afterMs: number | null }>;
  lastError: { code: string; message: string } | null;
  runId: string | null;
}

interface WebhookBody {
  type: string;
  data: { deliveryId: string; run: { id: string; state: string | null }; attention: { id: string } | null; actions: Array<{ action: string; url: string; expiresAt: string }> };
}


describe('notifications', () => {
  let env: ExecutionApp;
  let far: RecordingServer;
  let receiver: RecordingServer;

  const deliveries = async (query = '') =>
    (await env.sut.request<{ items: Delivery[] }>('GET', `/api/v1/workspaces/${env.ws}/notifications/deliveries${query}`, { headers: bearer(env.owner) })).body.items;
  const hooks = (): Array<RecordedRequest & { parsed: WebhookBody }> =>
    receiver.requests.filter((request) => request.url === '/hook').map((request) => ({ ...request, parsed: JSON.parse(request.body) as WebhookBody }));

  beforeAll(async () => {
    far = await new RecordingServer().start();
    receiver = await new RecordingServer().start();
    env = await startExecutionApp({
      allowPrivate: [`127.0.0.1:${far.port}`, `127.0.0.1:${receiver.port}`],
      env: {
        PACKETAGENT_NOTIFY_RETRY_BASE_MS: '40',
        PACKETAGENT_NOTIFY_RETRY_MAX_MS: '400',
        PACKETAGENT_NOTIFY_DELIVERY_TTL_SECONDS: '4',
      },
    });
    const stored = await env.sut.request('PUT', `/api/v1/workspaces/${env.ws}/credentials/ops_hook`, {
      body: { value: JSON.stringify({ url: `${receiver.origin}/hook`, secret: SECRET }) },
      headers: bearer(env.owner),
    });
    expect(stored.status).toBe(200);
  });
  afterAll(async () => {
    await env?.close();
    await far?.close();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respond = () => ({ status: 204, body: '' });
    far.requests.length = 0;
  });

  it('sends a signed webhook for an approval; its approve link resumes the run once, and a replay does nothing', async () => {
    env.writeScript('guarded', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/deploy", method: POST, body: "go" } }]\n${FINISH_TURN}`);
    const deploymentId = await env.deploy(
      manualWorker(
        'guarded',
        `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]
notifications:
  - { on: [attention, succeeded], channel: webhook, credential: ops_hook }`,
      ),
    );
    const runId = await env.startRun(deploymentId);
    const [request] = await eventually(() => hooks().length > 0 && hooks(), { what: 'the attention webhook' });

    // Standard Webhooks: the receiver verifies the signature with the route's secret.
    const verified = new Webhook(SECRET).verify(request!.body, request!.headers as Record<string, string>) as WebhookBody;
    expect(verified.type).toBe('packetagent.attention');
    expect(request!.headers['webhook-id']).toBe(verified.data.deliveryId);
    expect(verified.data.run.id).toBe(runId);
    expect(verified.data.actions.map((action) => action.action)).toEqual(['approve', 'reject', 'open']);
    const approve = verified.data.actions.find((action) => action.action === 'approve')!;
    expect(approve.url.startsWith(`http://127.0.0.1:${env.port}/api/v1/callbacks/`)).toBe(true);

    // Looking at a link changes nothing (mail scanners open links).
    const path = new URL(approve.url).pathname;
    const inspected = await env.sut.request<{ state: string; action: string }>('GET', path);
    expect(inspected.body).toMatchObject({ state: 'usable', action: 'approve' });
    const page = await env.sut.request('GET', path, { headers: { accept: 'text/html' } });
    expect(page.text).toContain('<form method="post"');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await env.runState(runId)).toBe('waiting');

    const [first, second] = await Promise.all([env.sut.request('POST', path, { body: {} }), env.sut.request('POST', path, { body: {} })]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
    expect(far.requests.filter((call) => call.url === '/deploy')).toHaveLength(1);

    const replay = await env.sut.request<{ code: string }>('POST', path, { body: {} });
    expect(replay.status).toBe(409);
    expect(replay.body.code).toBe('callback_used');
    expect(replay.headers.get('content-type')).toContain('application/problem+json');
    const answered = await env.sut.request<{ items: Array<{ runId: string; answeredBy: { kind: string; id: string } }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=approved`, {
      headers: bearer(env.owner),
    });
    expect(answered.body.items.find((item) => item.runId === runId)?.answeredBy).toEqual({ kind: 'remote_control', id: `webhook:route-0` });

    const succeeded = await eventually(() => hooks().find((hook) => hook.parsed.type === 'packetagent.succeeded'), { what: 'the outcome webhook' });
    expect(succeeded.parsed.data.run).toMatchObject({ id: runId, state: 'succeeded' });
    const { rows: used } = await env.sut.db.pool.query<{ type: string }>(`SELECT type FROM events WHERE type = 'remote_control.used' AND data->'target'->>'kind' = 'attention'`);
    expect(used).toHaveLength(1);
  });

  it('refuses a forged link (404) and an expired one (410)', async () => {
    const forged = await env.sut.request<{ code: string }>('POST', `/api/v1/callbacks/0190d6a2-0000-7000-8000-000000000000.${'A'.repeat(43)}`, { body: {} });
    expect(forged.status).toBe(404);
    expect(forged.body.code).toBe('callback_invalid');
    const malformed = await env.sut.request('GET', '/api/v1/callbacks/%00');
    expect(malformed.status).toBe(400);

    env.writeScript('lapsed', `turns:\n  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/deploy", method: POST, body: "go" } }]\n`);
    const deploymentId = await env.deploy(
      manualWorker(
        'lapsed',
        `tools: [{ tool: http_fetch, verbs: [POST], resources: ["${far.origin}/*"], approval: always }]
notifications:
  - { on: [attention], channel: webhook, credential: ops_hook }`,
      ),
    );
    const runId = await env.startRun(deploymentId);
    const hook = await eventually(() => hooks().find((request) => request.parsed.data.run.id === runId), { what: 'the attention webhook' });
    const reject = hook.parsed.data.actions.find((action) => action.action === 'reject')!;
    const attentionId = hook.parsed.data.attention!.id;
    // The link works until the attention's deadline; expire the attention as its deadline timer would.
    await env.sut.db.pool.query(`UPDATE notifications.callbacks SET expires_at = now() - interval '1 second' WHERE target_id = $1`, [attentionId]);
    const expired = await env.sut.request<{ code: string }>('POST', new URL(reject.url).pathname, { body: { reason: 'too late' } });
    expect(expired.status).toBe(410);
    expect(expired.body.code).toBe('callback_expired');
    expect(await env.runState(runId)).toBe('waiting');
    await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/runs/${runId}/stop`, { body: { reason: 'done testing' }, headers: bearer(env.owner) });
    await env.waitForState(runId, TERMINAL_RUN_STATES);
  });

  it('retries a receiver that is down five times with growing waits, and delivers once when it is back', async () => {
    let answered = 0;
    receiver.respond = () => (++answered <= 5 ? { status: 503, body: 'down' } : { status: 200, body: 'ok' });
    env.writeScript('quick', `turns:\n${FINISH_TURN}`);
    const deploymentId = await env.deploy(manualWorker('quick', `notifications:\n  - { on: [any_terminal], channel: webhook, credential: ops_hook }`));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');

    const delivered = await eventually(async () => (await deliveries(`?runId=${runId}`)).find((item) => item.state === 'delivered'), { what: 'the delivery', timeoutMs: 20_000 });
    expect(delivered.attempts).toBe(6);
    expect(delivered.attemptLog.map((attempt) => attempt.status)).toEqual([503, 503, 503, 503, 503, 200]);
    const ids = new Set(hooks().map((hook) => hook.headers['webhook-id']));
    expect(ids).toEqual(new Set([delivered.deliveryId]));
    expect(hooks().filter((hook) => hook.parsed.data.run.id === runId)).toHaveLength(6);

    const { rows } = await env.sut.db.pool.query<{ data: { backoffMs: number[] } }>(`SELECT data FROM events WHERE stream_id = $1 AND type = 'notification.delivered'`, [
      `delivery-${delivered.deliveryId}`,
    ]);
    const backoff = rows[0]!.data.backoffMs;
    expect(backoff).toHaveLength(5);
    // Exponential with jitter: each wait at least half its step (40, 80, 160, 320, then the 400 cap).
    [40, 80, 160, 320, 400].forEach((step, index) => {
      expect(backoff[index]).toBeGreaterThanOrEqual(step / 2);
      expect(backoff[index]).toBeLessThanOrEqual(step);
    });
    // Each attempt came no sooner than the wait scheduled before it.
    delivered.attemptLog.slice(1).forEach((attempt, index) => expect(attempt.afterMs).toBeGreaterThanOrEqual(backoff[index]!));
  });

  it('honours Retry-After, dead-letters past the expiry, and a redrive delivers it exactly once', async () => {
    // The first answer asks for a second's pause, longer than any backoff here (at most 400 ms).
    let answered = 0;
    receiver.respond = () => (++answered === 1 ? { status: 429, body: 'slow down', headers: { 'retry-after': '1' } } : { status: 429, body: 'slow down' });
    env.writeScript('lonely', `turns:\n${FINISH_TURN}`);
    const deploymentId = await env.deploy(manualWorker('lonely', `notifications:\n  - { on: [succeeded], channel: webhook, credential: ops_hook }`));
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');

    const dead = await eventually(async () => (await deliveries(`?runId=${runId}`)).find((item) => item.state === 'dead'), { what: 'the dead letter', timeoutMs: 20_000 });
    expect(dead.lastError?.code).toBe('expired');
    expect(dead.lastError?.message).toContain('http_429');
    const detail = await env.sut.request<Delivery>('GET', `/api/v1/workspaces/${env.ws}/notifications/deliveries/${dead.deliveryId}`, { headers: bearer(env.owner) });
    expect(detail.body.attemptLog[1]!.afterMs).toBeGreaterThanOrEqual(1_000);
    const listed = await deliveries('?state=dead');
    expect(listed.map((item) => item.deliveryId)).toContain(dead.deliveryId);

    const before = hooks().filter((hook) => hook.headers['webhook-id'] === dead.deliveryId).length;
    receiver.respond = () => ({ status: 200, body: 'ok' });
    const redriven = await env.sut.request<Delivery>('POST', `/api/v1/workspaces/${env.ws}/notifications/deliveries/${dead.deliveryId}/redrive`, { headers: bearer(env.owner) });
    expect(redriven.status).toBe(200);
    expect(redriven.body.state).toBe('pending');
    await eventually(async () => (await deliveries(`?runId=${runId}`)).find((item) => item.state === 'delivered'), { what: 'the redriven delivery' });
    expect(hooks().filter((hook) => hook.headers['webhook-id'] === dead.deliveryId).length).toBe(before + 1);

    const again = await env.sut.request<{ code: string }>('POST', `/api/v1/workspaces/${env.ws}/notifications/deliveries/${dead.deliveryId}/redrive`, { headers: bearer(env.owner) });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('delivery_not_dead');
    const { rows } = await env.sut.db.pool.query<{ type: string; actor: { kind: string } }>(`SELECT type, metadata->'actor' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version`, [
      `delivery-${dead.deliveryId}`,
    ]);
    expect(rows.map((row) => row.type)).toEqual(['notification.queued', 'notification.dead_lettered', 'notification.redriven', 'notification.delivered']);
    expect(rows[2]!.actor.kind).toBe('api_key');
  });

  it('keeps deliveries of one workspace from another, and needs a role that may redrive', async () => {
    const login = await env.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: 'correct horse battery staple' } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const other = await env.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    expect(other.status).toBe(201);
    const [mine] = await deliveries();
    const foreign = await env.sut.request('GET', `/api/v1/workspaces/${other.body.id}/notifications/deliveries/${mine!.deliveryId}`, { headers: session });
    expect(foreign.status).toBe(404);
    const foreignList = await env.sut.request<{ items: Delivery[] }>('GET', `/api/v1/workspaces/${other.body.id}/notifications/deliveries`, { headers: session });
    expect(foreignList.body.items).toEqual([]);
    const redriveForeign = await env.sut.request('POST', `/api/v1/workspaces/${other.body.id}/notifications/deliveries/${mine!.deliveryId}/redrive`, { headers: session });
    expect(redriveForeign.status).toBe(404);
    const viewerKey = await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${env.ws}/api-keys`, { body: { name: 'watcher', role: 'viewer' }, headers: session });
    expect(viewerKey.status).toBe(201);
    expect((await env.sut.request('GET', `/api/v1/workspaces/${env.ws}/notifications/deliveries`, { headers: bearer(viewerKey.body.secret) })).status).toBe(200);
    const viewerRedrive = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/notifications/deliveries/${mine!.deliveryId}/redrive`, { headers: bearer(viewerKey.body.secret) });
    expect(viewerRedrive.status).toBe(403);
    const unauthenticated = await env.sut.request('GET', `/api/v1/workspaces/${env.ws}/notifications/deliveries`);
    expect(unauthenticated.status).toBe(401);
  });

  it('never writes the signing secret into an event, a delivery or a callback record', async () => {
    const secretPart = SECRET.slice('whsec_'.length, 'whsec_'.length + 24);
    for (const query of ["SELECT data::text || metadata::text AS t FROM events", 'SELECT row_to_json(d)::text AS t FROM notifications.deliveries d', 'SELECT row_to_json(c)::text AS t FROM notifications.callbacks c']) {
      const { rows } = await env.sut.db.pool.query<{ t: string }>(query);
      expect(rows.filter((row) => row.t.includes(secretPart))).toEqual([]);
    }
  });
});
