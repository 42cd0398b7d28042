import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { roleHasPermission, ROLES, runControlStreamId, runStreamId, type Permission, type Role } from '@packetagent/contracts';
import { webhookSignature } from '@packetagent/intake';
import { eventually } from '@packetagent/testing';
import { bearer, startTestApp, type Answer, type TestApp } from './testing/app.testkit';

const EXAMPLE = readFileSync(join(__dirname, '../../../examples/release-audit.worker.yaml'), 'utf8');
const yaml = { 'content-type': 'application/yaml' };

/** The signature header a webhook sender computes with the trigger's secret. */
function sign(secret: string, timestamp: string, body: string): string {
  return `t=${timestamp},v1=${webhookSignature(secret, timestamp, Buffer.from(body))}`;
}

describe('control plane over HTTP', () => {
  let sut: TestApp;
  let ws: string;
  let owner: string;
  const keys = {} as Record<Role, string>;

  beforeAll(async () => {
    sut = await startTestApp();
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: sut.setupToken, email: 'owner@example.com', password: 'correct horse battery staple', workspace: 'Ops' },
    });
    expect(setup.status).toBe(201);
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
    keys.owner = owner;
    for (const role of ['viewer', 'member', 'admin'] as const) {
      const created = await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { body: { name: role, role }, headers: bearer(owner) });
      expect(created.status).toBe(201);
      keys[role] = created.body.secret;
    }
  });
  afterAll(() => sut.close());

  const api = (path: string) => `/api/v1/workspaces/${ws}${path}`;

  async function applyExample(name: string, key = owner): Promise<{ workerId: string; version: number; digest: string }> {
    const worker = await sut.request<{ id: string }>('POST', api('/workers'), { body: { name }, headers: bearer(key) });
    expect(worker.status).toBe(201);
    const version = await sut.request<{ version: number; digest: string }>('POST', api(`/workers/${worker.body.id}/versions`), {
      raw: EXAMPLE.replace('name: release-audit', `name: ${name}`),
      headers: { ...bearer(key), ...yaml },
    });
    expect(version.status).toBe(201);
    return { workerId: worker.body.id, ...version.body };
  }

  async function deploy(workerId: string, overrides: Record<string, unknown> = {}) {
    const answer = await sut.request<{ id: string; webhooks: { triggerId: string; secret: string }[]; triggers: { triggerId: string; kind: string }[] }>(
      'POST',
      api('/deployments'),
      // The example names credentials and a provider preset this test server lacks: deployed knowingly.
      { body: { workerId, overrides, acceptMissing: true }, headers: bearer(owner) },
    );
    expect(answer.status).toBe(201);
    return answer.body;
  }

  describe('workers and versions', () => {
    it('applies a YAML definition as an immutable version with its digest, and the same definition again creates nothing', async () => {
      const applied = await applyExample('release-audit');

      expect(applied).toMatchObject({ version: 1, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const again = await sut.request('POST', api(`/workers/${applied.workerId}/versions`), { raw: EXAMPLE, headers: { ...bearer(owner), ...yaml } });
      expect(again.body).toEqual({ version: 1, digest: applied.digest, created: false });
      const stored = await sut.request<{ digest: string; definition: { bounds: { maxConcurrentRuns: number } } }>(
        'GET',
        api(`/workers/${applied.workerId}/versions/1`),
        { headers: bearer(keys.viewer) },
      );
      expect(stored.body.digest).toBe(applied.digest);
      expect(stored.body.definition.bounds.maxConcurrentRuns).toBe(10);
    });

    const valid = () => EXAMPLE.replace('name: release-audit', 'name: malformed-target');
    const ALLOWED_KEYS = 'apiVersion, kind, name, description, model, instructions, input, output, tools, budgets, bounds, exit, triggers, notifications, mcp';
    const KNOWN_TOOLS = 'http_fetch, github_api, browser, run_command, files, git, slack_post, email_send, mcp, finish, ask_owner, propose_criteria, update_criteria';
    const malformed: { name: string; body: string; path: string; message: string }[] = [
      { name: 'a wrong apiVersion', body: valid().replace('apiVersion: packetagent/v1', 'apiVersion: packetagent/v2'), path: 'apiVersion', message: 'unsupported apiVersion "packetagent/v2" (supported: packetagent/v1)' },
      { name: 'a wrong type', body: valid().replace('maxIterations: 20', 'maxIterations: "twenty"'), path: 'bounds.maxIterations', message: 'expected a number, got a string' },
      { name: 'an unknown key', body: valid().replace('kind: Worker', 'kind: Worker\nowner: me'), path: 'owner', message: `unknown key (allowed: ${ALLOWED_KEYS})` },
      { name: 'an unknown tool', body: valid().replace('tool: slack_post', 'tool: slack_dm'), path: 'tools[1].tool', message: `unknown tool "slack_dm" (known: ${KNOWN_TOOLS})` },
      { name: 'an unknown verb', body: valid().replace('verbs: [GET]', 'verbs: [GET, TRACE]'), path: 'tools[0].verbs[1]', message: 'unknown verb "TRACE" for http_fetch (known: GET, HEAD, POST, PUT, PATCH, DELETE)' },
      { name: 'a bad cron expression', body: valid().replace('"0 9 * * 1-5"', '"0 25 * * *"'), path: 'triggers[0].cron', message: 'invalid cron expression: Invalid value for hour: 25' },
      { name: 'a cron that never fires', body: valid().replace('"0 9 * * 1-5"', '"0 9 30 2 *"'), path: 'triggers[0].cron', message: 'the cron expression never fires' },
      { name: 'a bad timezone', body: valid().replace('timezone: Europe/Paris', 'timezone: Mars/Olympus'), path: 'triggers[0].timezone', message: 'unknown time zone "Mars/Olympus"' },
      {
        name: 'a URL glob on every host',
        body: valid().replace('"https://ci.example.com/*"', '"https://*"'),
        path: 'tools[0].resources[0]',
        message: 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels',
      },
      { name: 'a bare wildcard resource', body: valid().replace('"https://ci.example.com/*"', '"*"'), path: 'tools[0].resources[0]', message: 'not a URL origin or glob' },
      { name: 'a negative budget', body: valid().replace('perRunUsd: 0.50', 'perRunUsd: -1'), path: 'budgets.perRunUsd', message: 'must be greater than 0' },
      { name: 'a zero budget', body: valid().replace('perDeploymentDailyUsd: 5', 'perDeploymentDailyUsd: 0'), path: 'budgets.perDeploymentDailyUsd', message: 'must be greater than 0' },
      { name: 'oversize instructions', body: valid().replace('instructions: |', `instructions: "${'x'.repeat(33_000)}"\nx-instructions: |`), path: 'instructions', message: 'instructions exceed 32768 characters' },
      {
        name: 'a YAML alias bomb',
        body: `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n`,
        path: '(yaml) 2:8',
        message: 'aliases expand beyond the limit of 50: refused as a resource exhaustion attack',
      },
      {
        name: 'a custom YAML tag',
        body: valid().replace('description: Verifies', 'description: !!js/function Verifies'),
        path: '(yaml) 6:14',
        message: 'unknown tag !!js/function: tags outside the YAML core schema are not allowed',
      },
      { name: 'a duplicate key', body: valid().replace('kind: Worker', 'kind: Worker\nkind: Worker'), path: '(yaml) 5:1', message: 'duplicate key: mapping keys must be unique' },
      { name: 'a missing exit condition', body: valid().replace(/exit:\n {2}finish:\n {4}criteria:\n {6}- [^\n]*\n/, ''), path: 'exit', message: 'required (exactly one of "finish" or "outputSchema")' },
      {
        name: 'a path escaping the workspace',
        body: valid().replace('  - tool: http_fetch', '  - tool: files\n    verbs: [read]\n    resources: ["../secrets/*"]\n  - tool: http_fetch'),
        path: 'tools[0].resources[0]',
        message: 'not a relative path glob inside the run workspace: ".." escapes the run workspace',
      },
    ];

    describe('malformed definitions', () => {
      let workerId: string;

      beforeAll(async () => {
        workerId = (await sut.request<{ id: string }>('POST', api('/workers'), { body: { name: 'malformed-target' }, headers: bearer(owner) })).body.id;
      });

      it.each(malformed)('refuses $name with the path and the rule, writing nothing', async ({ body, path, message }) => {
        const before = await sut.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'worker.version_created'`);

        const answer = await sut.request<{ errors: { path: string; message: string }[] }>('POST', api(`/workers/${workerId}/versions`), {
          raw: body,
          headers: { ...bearer(owner), ...yaml },
        });

        expect(answer.status).toBe(400);
        expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(answer.body.errors).toContainEqual({ path, message });
        const after = await sut.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'worker.version_created'`);
        expect(after.rows[0].n).toBe(before.rows[0].n);
        const versions = await sut.request<{ items: unknown[] }>('GET', api(`/workers/${workerId}/versions`), { headers: bearer(owner) });
        expect(versions.body.items).toEqual([]);
      });
    });
  });

  describe('deployments and runs', () => {
    let deployment: Awaited<ReturnType<typeof deploy>>;

    beforeAll(async () => {
      const { workerId } = await applyExample('runs-worker');
      deployment = await deploy(workerId, { bounds: { maxConcurrentRuns: 1 } });
    });

    it('refuses an override that broadens the version, naming the field, and creates nothing', async () => {
      const { workerId } = await applyExample('broadened');
      const answer = await sut.request<{ errors: { path: string; message: string }[] }>('POST', api('/deployments'), {
        body: { workerId, overrides: { budgets: { perRunUsd: 2 }, tools: [{ tool: 'http_fetch', verbs: ['GET', 'DELETE'] }] }, acceptMissing: true },
        headers: bearer(owner),
      });

      expect(answer.status).toBe(400);
      expect(answer.body.errors.map((e) => e.path).sort()).toEqual(['overrides.budgets.perRunUsd', 'overrides.tools[0].verbs[1]']);
      const listed = await sut.request<{ items: { workerId: string }[] }>('GET', api(`/deployments?workerId=${workerId}`), { headers: bearer(owner) });
      expect(listed.body.items).toEqual([]);
    });

    it('starts one run for the same manual activation and idempotency key sent twice', async () => {
      const start = () => sut.request<{ runId: string; duplicate: boolean }>('POST', api(`/deployments/${deployment.id}/runs`), {
        body: { input: { release: '2026.11.3' }, idempotencyKey: 'release-2026.11.3' },
        headers: bearer(keys.member),
      });
      const first = await start();
      const second = await start();

      expect([first.status, second.status]).toEqual([201, 200]);
      expect(second.body.runId).toBe(first.body.runId);
      const run = await sut.request<{ id: string; state: string }>('GET', api(`/runs/${first.body.runId}`), { headers: bearer(keys.viewer) });
      expect(run.body).toMatchObject({ id: first.body.runId, state: 'queued' });
      const runs = await sut.request<{ items: unknown[] }>('GET', api(`/runs?deploymentId=${deployment.id}`), { headers: bearer(keys.viewer) });
      expect(runs.body.items).toHaveLength(1);
    });

    it('defers while paused, admits the deferred run on resume, and refuses activations once revoked', async () => {
      const { workerId } = await applyExample('lifecycle');
      const target = await deploy(workerId);
      const control = (action: string, body: unknown = {}) =>
        sut.request<{ status: string; heldRuns: number }>('POST', api(`/deployments/${target.id}/${action}`), { body, headers: bearer(keys.admin) });
      expect((await control('pause', { reason: 'freeze' })).body.status).toBe('paused');
      const deferred = await sut.request<{ runId: string; hold: string }>('POST', api(`/deployments/${target.id}/runs`), { body: {}, headers: bearer(keys.member) });
      expect(deferred.body.hold).toBe('deployment_paused');

      expect((await control('resume')).body).toMatchObject({ status: 'active', heldRuns: 0 });
      const run = await sut.request<{ hold: string | null }>('GET', api(`/runs/${deferred.body.runId}`), { headers: bearer(keys.viewer) });
      expect(run.body.hold).toBeNull();

      expect((await control('revoke', { reason: 'retired' })).body.status).toBe('revoked');
      const refused = await sut.request<{ code: string; detail: string }>('POST', api(`/deployments/${target.id}/runs`), { body: {}, headers: bearer(keys.member) });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'deployment_revoked', detail: expect.stringContaining('retired') });
    });

    it('creates one deployment for one idempotency key, answering a retry with 200 and a reuse for another version with 409', async () => {
      const { workerId } = await applyExample('keyed');
      const create = (version: number | undefined, key: string) =>
        sut.request<{ id: string; created: boolean; webhooks: unknown[]; code: string }>('POST', api('/deployments'), {
          body: { workerId, ...(version ? { version } : {}), acceptMissing: true },
          headers: { ...bearer(owner), 'idempotency-key': key },
        });

      const [first, retried] = await Promise.all([create(1, 'deploy-keyed-1'), create(1, 'deploy-keyed-1')]);
      await sut.request('POST', api(`/workers/${workerId}/versions`), {
        raw: EXAMPLE.replace('name: release-audit', 'name: keyed').replace('Verifies release evidence', 'Verifies release evidence again'),
        headers: { ...bearer(owner), ...yaml },
      });
      const reused = await create(2, 'deploy-keyed-1');

      expect([first.status, retried.status].sort()).toEqual([200, 201]);
      expect(retried.body.id).toBe(first.body.id);
      expect([first.body, retried.body].filter((answer) => answer.created)).toHaveLength(1);
      expect(reused.status).toBe(409);
      expect(reused.body.code).toBe('idempotency_key_conflict');
      const listed = await sut.request<{ items: unknown[] }>('GET', api(`/deployments?workerId=${workerId}`), { headers: bearer(owner) });
      expect(listed.body.items).toHaveLength(1);
    });

    it('updates a deployment to a newer version, records deployment.updated, and refuses an older one', async () => {
      const { workerId } = await applyExample('updated');
      const target = await deploy(workerId);
      await sut.request('POST', api(`/workers/${workerId}/versions`), {
        raw: EXAMPLE.replace('name: release-audit', 'name: updated').replace('Verifies release evidence', 'Verifies release evidence again'),
        headers: { ...bearer(owner), ...yaml },
      });
      const update = (version: number) =>
        sut.request<{ version: number; code: string }>('POST', api(`/deployments/${target.id}/update`), { body: { version }, headers: bearer(keys.admin) });

      const updated = await update(2);
      const repeated = await update(2);
      const older = await update(1);

      expect([updated.status, updated.body.version]).toEqual([200, 2]);
      expect([repeated.status, repeated.body.version]).toEqual([200, 2]);
      expect([older.status, older.body.code]).toEqual([409, 'invalid_transition']);
      const { rows } = await sut.db.pool.query<{ type: string }>(`SELECT type FROM events WHERE stream_id = $1 ORDER BY stream_version`, [`deployment-${target.id}`]);
      expect(rows.map((row) => row.type)).toEqual(['deployment.created', 'deployment.updated']);
      // Every consumer of deployment events moves with it, as on a rollback.
      const deployed = await sut.request<{ effectiveDigest: string }>('GET', api(`/deployments/${target.id}`), { headers: bearer(owner) });
      await eventually(async () => {
        const { rows: seen } = await sut.db.pool.query<{ policy: number | null; projected: number | null; budget: string | null }>(
          `SELECT (SELECT version FROM policy.deployments WHERE deployment_id = $1) AS policy,
                  (SELECT version FROM projector.deployments WHERE deployment_id = $1) AS projected,
                  (SELECT effective_digest FROM budget.deployments WHERE deployment_id = $1) AS budget`,
          [target.id],
        );
        const row = seen[0]!;
        return row.policy === 2 && row.projected === 2 && row.budget?.trim() === deployed.body.effectiveDigest ? row : undefined;
      }, { timeoutMs: 10_000, what: 'policy, budget and the read model at version 2' });
    });

    it('records pause and resume of a run with the actor, once each, and refuses them on a finished run', async () => {
      const started = await sut.request<{ runId: string }>('POST', api(`/deployments/${deployment.id}/runs`), { body: {}, headers: bearer(keys.member) });
      const runPath = api(`/runs/${started.body.runId}`);
      const paused = await sut.request<{ pauseRequested: boolean }>('POST', `${runPath}/pause`, { body: { reason: 'checking' }, headers: bearer(keys.member) });
      const again = await sut.request<{ pauseRequested: boolean }>('POST', `${runPath}/pause`, { body: {}, headers: bearer(keys.member) });
      const resumed = await sut.request<{ pauseRequested: boolean }>('POST', `${runPath}/resume`, { headers: bearer(keys.member) });
      expect([paused.body.pauseRequested, again.body.pauseRequested, resumed.body.pauseRequested]).toEqual([true, true, false]);
      const streamOf = async (stream: string) =>
        (await sut.db.pool.query<{ type: string; actor: string }>(`SELECT type, metadata->'actor'->>'kind' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version`, [stream])).rows;
      // This deployment allows one run at a time, so the new run may wait (run.deferred) or not.
      // The requests go to the run's control stream; the run's own stream is the supervisor's to write.
      const rows = await streamOf(runStreamId(started.body.runId));
      expect(rows.map((r) => r.type)).toEqual([expect.stringMatching(/^run\.(admitted|deferred)$/)]);
      expect((await streamOf(runControlStreamId(started.body.runId))).map((r) => [r.type, r.actor])).toEqual([
        ['run.pause_requested', 'api_key'],
        ['run.resume_requested', 'api_key'],
      ]);
      await sut.request('POST', `${runPath}/stop`, { body: {}, headers: bearer(keys.member) });
      const refused = await sut.request<{ code: string }>('POST', `${runPath}/pause`, { body: {}, headers: bearer(keys.member) });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe('invalid_transition');
    });

    it('stops a queued run at once and says so', async () => {
      const started = await sut.request<{ runId: string }>('POST', api(`/deployments/${deployment.id}/runs`), { body: {}, headers: bearer(keys.member) });
      const stopped = await sut.request<{ state: string }>('POST', api(`/runs/${started.body.runId}/stop`), { body: { reason: 'not needed' }, headers: bearer(keys.member) });
      expect(stopped.status).toBe(200);
      expect(stopped.body.state).toBe('cancelled');
    });
  });

  describe('webhook ingress', () => {
    let hook: { triggerId: string; secret: string };
    let deploymentId: string;

    beforeAll(async () => {
      const { workerId } = await applyExample('hooked');
      const deployed = await deploy(workerId);
      deploymentId = deployed.id;
      hook = deployed.webhooks[0]!;
    });

    const post = (body: string, signature: string | undefined, contentType = 'application/json') =>
      sut.request<{ runId: string; code: string }>('POST', `/hooks/${hook.triggerId}`, {
        raw: body,
        headers: { 'content-type': contentType, ...(signature ? { 'x-packetagent-signature': signature } : {}) },
      });
    const runs = async () => (await sut.request<{ items: unknown[] }>('GET', api(`/runs?deploymentId=${deploymentId}`), { headers: bearer(owner) })).body.items;
    const now = () => String(Math.floor(Date.now() / 1000));

    it('refuses a forged signature, a stale timestamp, a missing signature and an oversize body, admitting nothing', async () => {
      const body = JSON.stringify({ release: '1' });
      const forged = await post(body, sign('whsec_forged', now(), body));
      const stale = String(Math.floor(Date.now() / 1000) - 600);
      const old = await post(body, sign(hook.secret, stale, body));
      const unsigned = await post(body, undefined);
      const big = JSON.stringify({ blob: 'x'.repeat(300_000) });
      const oversize = await post(big, sign(hook.secret, now(), big));

      expect([forged.status, old.status, unsigned.status, oversize.status]).toEqual([401, 401, 401, 413]);
      expect([forged.body.code, old.body.code, unsigned.body.code, oversize.body.code]).toEqual([
        'webhook_signature_invalid',
        'webhook_timestamp_stale',
        'webhook_signature_invalid',
        'payload_too_large',
      ]);
      expect(await runs()).toEqual([]);
    });

    it('answers 202 with the activation for a valid delivery, exactly once, and refuses the replay', async () => {
      const body = JSON.stringify({ release: '2026.11.3' });
      const signature = sign(hook.secret, now(), body);

      const accepted = await post(body, signature);
      const replayed = await post(body, signature);

      expect(accepted.status).toBe(202);
      expect(accepted.body).toMatchObject({ runId: expect.any(String), activationId: expect.any(String), duplicate: false });
      expect(replayed.status).toBe(409);
      expect(replayed.body.code).toBe('webhook_replayed');
      expect(await runs()).toHaveLength(1);
    });

    it('answers 404 for a trigger that does not exist', async () => {
      const answer = await sut.request('POST', '/hooks/trg_000000000000000000000000', { raw: '{}', headers: { 'content-type': 'application/json', 'x-packetagent-signature': `t=${now()},v1=${'0'.repeat(64)}` } });
      expect(answer.status).toBe(404);
    });
  });

  describe('Alertmanager receiver', () => {
    it('accepts a version 4 payload unchanged and wakes only subscribed deployments', async () => {
      const subscribed = await applyExample('on-alert');
      const subscribedVersion = await sut.request<{ version: number }>('POST', api(`/workers/${subscribed.workerId}/versions`), {
        raw: EXAMPLE.replace('name: release-audit', 'name: on-alert').replace('  - { webhook: {} }', '  - { alert: { names: [HighErrorRate] } }'),
        headers: { ...bearer(owner), ...yaml },
      });
      expect(subscribedVersion.status).toBe(201);
      const woken = await sut.request<{ id: string }>('POST', api('/deployments'), { body: { workerId: subscribed.workerId, acceptMissing: true }, headers: bearer(owner) });
      const payload = JSON.parse(readFileSync(join(__dirname, '../../intake/src/alerts/alertmanager.sample.json'), 'utf8')) as unknown;

      const answer = await sut.request<{ received: number; activations: { deploymentId: string }[] }>('POST', api('/alerts'), { body: payload, headers: bearer(keys.member) });

      expect(answer.status).toBe(202);
      expect(answer.body.received).toBe(2);
      expect(answer.body.activations.map((a) => a.deploymentId)).toEqual([woken.body.id]);
    });
  });

  describe('authorisation', () => {
    interface Route {
      method: string;
      path: () => string;
      permission: Permission;
      body?: () => unknown;
    }
    let fixture: { workerId: string; deploymentId: string; runId: string };

    beforeAll(async () => {
      const { workerId } = await applyExample('matrix');
      const deployed = await deploy(workerId);
      const run = await sut.request<{ runId: string }>('POST', api(`/deployments/${deployed.id}/runs`), { body: {}, headers: bearer(owner) });
      fixture = { workerId, deploymentId: deployed.id, runId: run.body.runId };
    });

    const routes: Route[] = [
      { method: 'GET', path: () => '/workers', permission: 'inspect' },
      { method: 'POST', path: () => '/workers', permission: 'author', body: () => ({ name: `m-${Math.random().toString(36).slice(2, 8)}` }) },
      { method: 'GET', path: () => `/workers/${fixture.workerId}`, permission: 'inspect' },
      { method: 'POST', path: () => `/workers/${fixture.workerId}/versions`, permission: 'author', body: () => ({}) },
      { method: 'GET', path: () => `/workers/${fixture.workerId}/versions`, permission: 'inspect' },
      { method: 'GET', path: () => `/workers/${fixture.workerId}/versions/1`, permission: 'inspect' },
      { method: 'GET', path: () => `/workers/${fixture.workerId}/versions/1/readiness`, permission: 'inspect' },
      { method: 'POST', path: () => '/workers/apply', permission: 'author', body: () => ({}) },
      { method: 'POST', path: () => '/workers/readiness', permission: 'author', body: () => ({}) },
      { method: 'POST', path: () => '/workers/draft', permission: 'author', body: () => ({ prompt: 'summarise a page on demand' }) },
      { method: 'GET', path: () => '/templates', permission: 'inspect' },
      { method: 'GET', path: () => '/templates/release-audit', permission: 'inspect' },
      { method: 'POST', path: () => '/templates/release-audit/instantiate', permission: 'author', body: () => ({ name: `t-${Math.random().toString(36).slice(2, 8)}` }) },
      { method: 'POST', path: () => '/deployments', permission: 'deploy', body: () => ({ workerId: fixture.workerId, acceptMissing: true }) },
      { method: 'GET', path: () => '/deployments', permission: 'inspect' },
      { method: 'GET', path: () => `/deployments/${fixture.deploymentId}`, permission: 'inspect' },
      { method: 'POST', path: () => `/deployments/${fixture.deploymentId}/pause`, permission: 'deployment-control', body: () => ({}) },
      { method: 'POST', path: () => `/deployments/${fixture.deploymentId}/resume`, permission: 'deployment-control', body: () => ({}) },
      { method: 'POST', path: () => `/deployments/${fixture.deploymentId}/rollback`, permission: 'deployment-control', body: () => ({ version: 1 }) },
      { method: 'POST', path: () => `/deployments/${fixture.deploymentId}/update`, permission: 'deployment-control', body: () => ({ version: 1 }) },
      { method: 'POST', path: () => `/deployments/${fixture.deploymentId}/runs`, permission: 'run-control', body: () => ({}) },
      { method: 'GET', path: () => '/runs', permission: 'inspect' },
      { method: 'GET', path: () => `/runs/${fixture.runId}`, permission: 'inspect' },
      { method: 'POST', path: () => `/runs/${fixture.runId}/pause`, permission: 'run-control', body: () => ({}) },
      { method: 'POST', path: () => `/runs/${fixture.runId}/resume`, permission: 'run-control' },
      { method: 'POST', path: () => `/runs/${fixture.runId}/stop`, permission: 'run-control', body: () => ({}) },
      { method: 'POST', path: () => '/alerts', permission: 'run-control', body: () => ({ version: '4', groupKey: 'g', status: 'firing', receiver: 'r', alerts: [] }) },
      { method: 'GET', path: () => '/attention?state=open', permission: 'inspect' },
      { method: 'POST', path: () => '/attention/00000000-0000-7000-8000-000000000000/approve', permission: 'approve', body: () => ({ scope: 'once' }) },
      { method: 'POST', path: () => '/attention/00000000-0000-7000-8000-000000000000/reject', permission: 'approve', body: () => ({ reason: 'no' }) },
      { method: 'GET', path: () => '/budgets', permission: 'inspect' },
      { method: 'GET', path: () => '/credentials', permission: 'inspect' },
      { method: 'PUT', path: () => '/credentials/matrix_secret', permission: 'admin', body: () => ({ value: 'matrix-value' }) },
      { method: 'DELETE', path: () => '/credentials/matrix_secret', permission: 'admin' },
      { method: 'GET', path: () => '/api-keys', permission: 'admin' },
      { method: 'POST', path: () => '/api-keys', permission: 'admin', body: () => ({ name: 'matrix', role: 'viewer' }) },
      { method: 'DELETE', path: () => '/api-keys/0000000000000000dead', permission: 'admin' },
      { method: 'GET', path: () => '/packetade/actors', permission: 'admin' },
      { method: 'POST', path: () => '/packetade/actors', permission: 'admin', body: () => ({ actorName: 'matrix', operations: ['validate'], expiresAt: new Date(Date.now() + 3_600_000).toISOString() }) },
      { method: 'DELETE', path: () => '/packetade/actors/0000000000000000dead', permission: 'admin' },
      { method: 'GET', path: () => '/packetade/publishers', permission: 'admin' },
      { method: 'POST', path: () => '/packetade/publishers', permission: 'admin', body: () => ({ name: 'matrix', publicKey: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString() }) },
      { method: 'DELETE', path: () => `/packetade/publishers/SHA256:${'0'.repeat(64)}`, permission: 'admin' },
      { method: 'POST', path: () => '/packetade/acknowledgements', permission: 'admin', body: () => ({ packageDigest: 'a'.repeat(64), keyId: `SHA256:${'b'.repeat(64)}` }) },
      // Revoke last: it ends the fixture deployment for the routes above.
      { method: 'POST', path: () => `/deployments/${fixture.deploymentId}/revoke`, permission: 'deployment-control', body: () => ({}) },
    ];

    const call = (route: Route, key: string, workspace = ws): Promise<Answer> =>
      sut.request(route.method, `/api/v1/workspaces/${workspace}${route.path()}`, { ...(route.body ? { body: route.body() } : {}), headers: bearer(key) });

    it.each(ROLES.flatMap((role) => routes.map((route) => ({ role, route, label: `${route.method} ${route.path.toString().replace(/^\(\) => /, '')}` }))))(
      '$role: $label is allowed exactly when the role holds the permission',
      async ({ role, route }) => {
        const answer = await call(route, keys[role]);
        if (roleHasPermission(role, route.permission)) {
          expect([401, 403]).not.toContain(answer.status);
          expect(answer.status).toBeLessThan(500);
        } else {
          expect(answer.status).toBe(403);
          expect(answer.body).toMatchObject({ code: 'permission_denied' });
        }
      },
    );

    it('answers 404 on every route of a workspace the caller does not belong to', async () => {
      const login = await sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'owner@example.com', password: 'correct horse battery staple' } });
      const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
      const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
      const other = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
      expect(other.status).toBe(201);
      const outsider = await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'outsider', role: 'owner' }, headers: session });
      expect(outsider.status).toBe(201);

      for (const route of routes) {
        const answer = await call(route, outsider.body.secret);
        expect({ route: `${route.method} ${route.path()}`, status: answer.status }).toEqual({ route: `${route.method} ${route.path()}`, status: 404 });
      }
      // And the outsider's own workspace shows none of this one's resources.
      const own = await sut.request<{ items: unknown[] }>('GET', `/api/v1/workspaces/${other.body.id}/workers`, { headers: bearer(outsider.body.secret) });
      expect(own.body.items).toEqual([]);
      const probe = await sut.request('GET', `/api/v1/workspaces/${other.body.id}/runs/${fixture.runId}`, { headers: bearer(outsider.body.secret) });
      expect(probe.status).toBe(404);
    });

    it('refuses expired and revoked keys with 401', async () => {
      const expiring = await sut.request<{ id: string; secret: string }>('POST', api('/api-keys'), {
        body: { name: 'expiring', role: 'member', expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
        headers: bearer(owner),
      });
      const revoked = await sut.request<{ id: string; secret: string }>('POST', api('/api-keys'), { body: { name: 'revoked', role: 'member' }, headers: bearer(owner) });
      expect((await sut.request('GET', api('/workers'), { headers: bearer(expiring.body.secret) })).status).toBe(200);
      await sut.db.pool.query(`UPDATE identity.api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.body.id]);
      expect((await sut.request('DELETE', api(`/api-keys/${revoked.body.id}`), { headers: bearer(owner) })).status).toBe(204);

      for (const key of [expiring.body.secret, revoked.body.secret, 'pa_nonexistent_secret']) {
        const answer = await sut.request('GET', api('/workers'), { headers: bearer(key) });
        expect(answer.status).toBe(401);
      }
    });

    it('publishes every route in the OpenAPI 3.1 document with its permission', async () => {
      const doc = await sut.request<{ openapi: string; paths: Record<string, Record<string, { 'x-required-permission'?: string }>> }>('GET', '/api/v1/openapi.json');
      expect(doc.body.openapi).toBe('3.1.0');
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining([
          '/api/v1/workspaces/{ws}/workers/{workerId}/versions',
          '/api/v1/workspaces/{ws}/deployments/{id}/runs',
          '/api/v1/workspaces/{ws}/runs/{runId}/stop',
          '/api/v1/workspaces/{ws}/alerts',
          '/hooks/{triggerId}',
        ]),
      );
      expect(doc.body.paths['/api/v1/workspaces/{ws}/deployments']!['post']!['x-required-permission']).toBe('deploy');
    });
  });
});
