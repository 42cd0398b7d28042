import { WORKER_TEMPLATES } from '@packetagent/contracts';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

interface Missing {
  kind: string;
  name: string;
  reason: string;
}
interface Instantiated {
  workerId: string;
  workerName: string;
  version: number;
  digest: string;
  demo: boolean;
  exampleInput: unknown;
  readiness: { ready: boolean; missing: Missing[] };
}

describe('templates, readiness and deploy refusal', () => {
  let app: ExecutionApp;
  let viewer: string;
  let other: { ws: string; key: string };
  const api = (path: string) => `/api/v1/workspaces/${app.ws}${path}`;
  const asOwner = () => bearer(app.owner);

  beforeAll(async () => {
    app = await startExecutionApp();
    viewer = (await app.sut.request<{ secret: string }>('POST', api('/api-keys'), { body: { name: 'viewer', role: 'viewer' }, headers: asOwner() })).body.secret;
    const login = await app.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: 'correct horse battery staple' } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const created = await app.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const otherWs = created.body.id;
    const key = await app.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${otherWs}/api-keys`, { body: { name: 'other-admin', role: 'admin' }, headers: session });
    other = { ws: otherWs, key: key.body.secret };
  });
  afterAll(() => app.close());

  const instantiate = (id: string, body: Record<string, unknown>, headers = asOwner()) => app.sut.request<Instantiated & { code: string; errors: { path: string; message: string }[] }>('POST', api(`/templates/${id}/instantiate`), { body, headers });

  it('lists the six starters to any member, with their schedules, tools and credentials', async () => {
    const answer = await app.sut.request<{ items: { id: string; schedule: string | null; tools: string[]; credentials: string[] }[] }>('GET', api('/templates'), { headers: bearer(viewer) });
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((item) => item.id)).toEqual(WORKER_TEMPLATES.map((template) => template.id));
    expect(answer.body.items[0]).toMatchObject({ id: 'support-inbox-triage', schedule: '*/15 * * * *', tools: ['http_fetch', 'files', 'slack_post'], credentials: ['oncall_webhook', 'support_mailbox'] });
  });

  it('shows a template as written with what this workspace lacks to run it, and 404 for an unknown one', async () => {
    const answer = await app.sut.request<{ definition: string; readiness: { ready: boolean; missing: Missing[] } }>('GET', api('/templates/support-inbox-triage'), { headers: bearer(viewer) });
    expect(answer.status).toBe(200);
    expect(answer.body.definition).toContain('# Support inbox triage: every 15 minutes');
    expect(answer.body.readiness.ready).toBe(false);
    expect(answer.body.readiness.missing).toEqual(
      expect.arrayContaining([
        { kind: 'credential', name: 'oncall_webhook', reason: 'not stored in the workspace vault' },
        { kind: 'credential', name: 'support_mailbox', reason: 'not stored in the workspace vault' },
        expect.objectContaining({ kind: 'provider', name: 'preset:default' }),
      ]),
    );
    const unknown = await app.sut.request<{ code: string }>('GET', api('/templates/nope'), { headers: bearer(viewer) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('template_not_found');
  });

  it.each(WORKER_TEMPLATES.map((template) => [template.id] as const))('runs the %s demo to success without a model key: instantiate, deploy, start with its example input', async (id) => {
    const made = await instantiate(id, { name: `${id}-demo`, demo: true });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ workerName: `${id}-demo`, version: 1, demo: true, readiness: { ready: true, missing: [] } });
    const deployed = await app.sut.request<{ id: string; readiness: { ready: boolean } }>('POST', api('/deployments'), { body: { workerId: made.body.workerId }, headers: asOwner() });
    expect(deployed.status).toBe(201);
    expect(deployed.body.readiness.ready).toBe(true);
    const runId = await app.startRun(deployed.body.id, made.body.exampleInput);
    expect(await app.waitForState(runId, ['succeeded', 'failed', 'abandoned', 'stopped'], 60_000)).toBe('succeeded');
    const types = (await app.events(runId)).map((event) => event.type);
    const template = WORKER_TEMPLATES.find((entry) => entry.id === id)!;
    expect(types.filter((type) => type === 'run.model_turn')).toHaveLength((template.demo.script['turns'] as unknown[]).length);
    expect(types.filter((type) => type === 'run.tool_result').length).toBeGreaterThan(0);
  });

  it('keeps the instantiated document as written, comments included', async () => {
    const made = await instantiate('release-audit', { name: 'audit-as-written' });
    expect(made.status).toBe(201);
    const version = await app.sut.request<{ definition: { name: string }; source: { format: string; text: string } }>('GET', api(`/workers/${made.body.workerId}/versions/1`), { headers: bearer(viewer) });
    expect(version.body.definition.name).toBe('audit-as-written');
    expect(version.body.source.format).toBe('yaml');
    expect(version.body.source.text).toContain('# Release audit: started on demand');
    expect(version.body.source.text.indexOf('name: audit-as-written')).toBeLessThan(version.body.source.text.indexOf('tools:'));
    const listed = await app.sut.request<{ items: Record<string, unknown>[] }>('GET', api(`/workers/${made.body.workerId}/versions`), { headers: bearer(viewer) });
    expect(listed.body.items[0]).not.toHaveProperty('source');
  });

  it('refuses to deploy a worker that lacks what it needs, naming each missing thing and arming nothing; acceptMissing deploys it anyway, saying what is missing', async () => {
    const made = await instantiate('weekly-release-notes', { name: 'notes-for-real' });
    expect(made.status).toBe(201);
    expect(made.body.readiness.ready).toBe(false);

    const refused = await app.sut.request<{ code: string; detail: string; errors: { path: string; message: string }[] }>('POST', api('/deployments'), { body: { workerId: made.body.workerId }, headers: asOwner() });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.code).toBe('deployment_not_ready');
    expect(refused.body.detail).toContain('acceptMissing');
    expect(refused.body.errors.map((error) => error.path)).toEqual(expect.arrayContaining(['credentials.github_token', 'credentials.release_mail', 'providers.preset:default']));
    const listed = await app.sut.request<{ items: unknown[] }>('GET', api(`/deployments?workerId=${made.body.workerId}`), { headers: asOwner() });
    expect(listed.body.items).toEqual([]);

    const readiness = await app.sut.request<{ ready: boolean; missing: Missing[] }>('GET', api(`/workers/${made.body.workerId}/versions/1/readiness`), { headers: bearer(viewer) });
    expect(readiness.body.missing.map((item) => item.name)).toEqual(expect.arrayContaining(['github_token', 'release_mail']));

    await app.sut.request('PUT', api('/credentials/github_token'), { body: { value: 'ghp_test' }, headers: asOwner() });
    const fewer = await app.sut.request<{ ready: boolean; missing: Missing[] }>('GET', api(`/workers/${made.body.workerId}/versions/1/readiness`), { headers: bearer(viewer) });
    expect(fewer.body.missing.map((item) => item.name)).not.toContain('github_token');

    const anyway = await app.sut.request<{ id: string; readiness: { ready: boolean; missing: Missing[] } }>('POST', api('/deployments'), { body: { workerId: made.body.workerId, acceptMissing: true }, headers: asOwner() });
    expect(anyway.status).toBe(201);
    expect(anyway.body.readiness.ready).toBe(false);
    expect(anyway.body.readiness.missing.map((item) => item.name)).toContain('release_mail');

    // Readiness is of the deployment's effective definition: overrides that take a credential
    // out of a grant take it out of what is missing too.
    const narrowed = await app.sut.request<{ code: string; errors: { path: string }[] }>('POST', api('/deployments'), {
      body: { workerId: made.body.workerId, overrides: { tools: [{ tool: 'email_send', resources: ['product@example.com'], approval: 'always', credentials: [] }] } },
      headers: asOwner(),
    });
    expect([narrowed.status, narrowed.body.code]).toEqual([422, 'deployment_not_ready']);
    expect(narrowed.body.errors.map((error) => error.path)).toEqual(['providers.preset:default']);
  });

  it('checks a definition before it is saved: every issue at its path, or its readiness', async () => {
    const template = WORKER_TEMPLATES.find((entry) => entry.id === 'research-summarizer')!;
    const ready = await app.sut.request<{ name: string; readiness: { ready: boolean; missing: Missing[] } }>('POST', api('/workers/readiness'), {
      raw: template.definition,
      headers: { ...asOwner(), 'content-type': 'application/yaml' },
    });
    expect(ready.status).toBe(200);
    expect(ready.body.name).toBe('research-summarizer');
    expect(ready.body.readiness.missing.map((item) => item.kind)).toEqual(['provider']);

    const invalid = await app.sut.request<{ errors: { path: string }[] }>('POST', api('/workers/readiness'), {
      raw: template.definition.replace('maxIterations: 6', 'maxIterations: -1'),
      headers: { ...asOwner(), 'content-type': 'application/yaml' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.map((error) => error.path)).toEqual(['bounds.maxIterations']);
  });

  it('refuses a taken name, a bad name, an override it may not make and an invalid result, creating nothing', async () => {
    expect((await instantiate('blocker-watcher', { name: 'watcher' })).status).toBe(201);
    const taken = await instantiate('blocker-watcher', { name: 'watcher' });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('worker_name_taken');
    const versions = await app.sut.request<{ items: unknown[] }>('GET', api(`/workers/${(await workerNamed('watcher'))!}/versions`), { headers: asOwner() });
    expect(versions.body.items).toHaveLength(1);

    expect((await instantiate('blocker-watcher', { name: 'Bad Name' })).status).toBe(400);
    const field = await instantiate('blocker-watcher', { name: 'watcher-2', overrides: { kind: 'Other' } });
    expect(field.status).toBe(400);
    const invalid = await instantiate('blocker-watcher', { name: 'watcher-3', overrides: { bounds: { maxIterations: 0 } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.map((error) => error.path)).toEqual(['bounds.maxIterations']);
    expect(await workerNamed('watcher-3')).toBeUndefined();
  });

  it('lets only authors instantiate, and only in their own workspace', async () => {
    const byViewer = await instantiate('release-audit', { name: 'by-viewer' }, bearer(viewer));
    expect(byViewer.status).toBe(403);
    const elsewhere = await app.sut.request('POST', `/api/v1/workspaces/${other.ws}/templates/release-audit/instantiate`, { body: { name: 'cross' }, headers: bearer(viewer) });
    expect(elsewhere.status).toBe(404);
    const own = await app.sut.request<{ workerName: string }>('POST', `/api/v1/workspaces/${other.ws}/templates/release-audit/instantiate`, { body: { name: 'cross' }, headers: bearer(other.key) });
    expect(own.status).toBe(201);
    expect(await workerNamed('cross')).toBeUndefined();
  });

  async function workerNamed(name: string): Promise<string | undefined> {
    const workers = await app.sut.request<{ items: { id: string; name: string }[] }>('GET', api('/workers?limit=100'), { headers: asOwner() });
    return workers.body.items.find((worker) => worker.name === name)?.id;
  }
});
