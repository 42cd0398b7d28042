import { computeEventDigest, TERMINAL_RUN_STATES, verifyEvidenceBundle, type AuditReport, type EvidenceBundle } from '@packetagent/contracts';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { healthReportExample, RecordingServer, startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

describe('audit verification and evidence bundles', () => {
  let env: ExecutionApp;
  let far: RecordingServer;
  let runId: string;
  let viewer: string;
  let outsider: string;

  beforeAll(async () => {
    far = await new RecordingServer().start();
    env = await startExecutionApp({ allowPrivate: [`127.0.0.1:${far.port}`], env: { PACKETAGENT_SLACK_WEBHOOK_BASE_URL: far.origin } });
    const created = await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${env.ws}/api-keys`, { body: { name: 'viewer', role: 'viewer' }, headers: bearer(env.owner) });
    viewer = created.body.secret;
    outsider = await keyOfAnotherWorkspace();

    // The example fetches, asks for approval, posts once and finishes: decisions, an attention record, effects and checkpoints.
    const example = healthReportExample(env.port);
    env.writeScript('health-report', example.script);
    await env.sut.request('PUT', `/api/v1/workspaces/${env.ws}/credentials/ops_webhook`, { body: { value: 'https://hooks.slack.com/services/T0/B0/x' }, headers: bearer(env.owner) });
    runId = await env.startRun(await env.deploy(example.worker));
    await env.waitForState(runId, ['waiting']);
    const open = await eventually(async () => {
      const list = await env.sut.request<{ items: Array<{ id: string; runId: string }> }>('GET', `/api/v1/workspaces/${env.ws}/attention?state=open`, { headers: bearer(env.owner) });
      return list.body.items.find((item) => item.runId === runId);
    }, { what: 'the approval request' });
    await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${open.id}/approve`, { body: { scope: 'once' }, headers: bearer(env.owner) });
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES)).toBe('succeeded');
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await far?.close();
  });

  async function keyOfAnotherWorkspace(): Promise<string> {
    const login = await env.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: 'correct horse battery staple' } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const other = await env.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const key = await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'other', role: 'owner' }, headers: session });
    return key.body.secret;
  }

  const api = (path: string) => `/api/v1/workspaces/${env.ws}${path}`;
  const evidence = async () => {
    const answer = await env.sut.request<EvidenceBundle>('GET', api(`/runs/${runId}/evidence`), { headers: bearer(viewer) });
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const copy = (bundle: EvidenceBundle): EvidenceBundle => JSON.parse(JSON.stringify(bundle)) as EvidenceBundle;

  it('exports a bundle of the run, its decisions and its attention record that verifies offline', async () => {
    const sut = await evidence();

    const result = verifyEvidenceBundle(sut);

    expect(result).toMatchObject({ ok: true, runId, workspaceId: env.ws, breaks: [] });
    expect(sut.streams.map((stream) => stream.role)).toEqual(['run', 'policy', 'attention']);
    expect(sut.index.checkpoints.length).toBeGreaterThan(0);
    expect(sut.index.effects).toEqual([expect.objectContaining({ tool: 'slack_post', outcome: 'completed' })]);
    expect(sut.index.decisions.map((decision) => decision.decision)).toEqual(expect.arrayContaining(['allow', 'approval_required']));
    expect(result.checkpointsChecked).toBe(sut.index.checkpoints.length);
  });

  it('catches an edited event, a removed event and an edited checkpoint, each by stream and position', async () => {
    const sut = await evidence();
    const run = sut.streams[0]!;

    const edited = copy(sut);
    const target = edited.streams[0]!.events[2]!;
    target.actor = { kind: 'user', id: 'someone-else' };
    expect(verifyEvidenceBundle(edited).breaks).toContainEqual(
      expect.objectContaining({ stream: run.stream, streamVersion: 3, globalPosition: target.globalPosition, reason: 'digest_mismatch' }),
    );

    const removed = copy(sut);
    const gone = removed.streams[1]!.events.splice(0, 1)[0]!;
    expect(verifyEvidenceBundle(removed).breaks).toContainEqual(
      expect.objectContaining({ stream: `policy-${runId}`, streamVersion: 2, reason: 'version_gap', globalPosition: removed.streams[1]!.events[0]!.globalPosition }),
    );
    expect(gone.type).toBe('policy.decided');

    const forged = copy(sut);
    const checkpoint = forged.streams[0]!.events.find((event) => event.type === 'run.checkpoint')!;
    (checkpoint.data as { digest: string }).digest = '0'.repeat(64);
    checkpoint.digest = computeEventDigest(checkpoint);
    const breaks = verifyEvidenceBundle(forged).breaks;
    expect(breaks).toContainEqual(expect.objectContaining({ stream: run.stream, streamVersion: checkpoint.streamVersion, globalPosition: checkpoint.globalPosition, reason: 'checkpoint_chain' }));
    expect(breaks).toContainEqual(expect.objectContaining({ reason: 'bundle_digest_mismatch' }));
  });

  it('answers 404 for a run of another workspace and for a run that does not exist, and 401 without a key', async () => {
    expect((await env.sut.request('GET', api(`/runs/${runId}/evidence`), { headers: bearer(outsider) })).status).toBe(404);
    expect((await env.sut.request('GET', api('/runs/0193a000-0000-7000-8000-000000000000/evidence'), { headers: bearer(viewer) })).status).toBe(404);
    expect((await env.sut.request('GET', api('/audit/verify'), { headers: bearer(outsider) })).status).toBe(404);
    const anonymous = await env.sut.request('GET', api('/audit/verify'));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
  });

  it('publishes the audit and event routes in the OpenAPI document, each needing the inspect permission', async () => {
    const document = await env.sut.request<{ paths: Record<string, { get?: { 'x-required-permission'?: string; responses: Record<string, unknown> } }> }>('GET', '/api/v1/openapi.json');

    for (const path of ['audit/verify', 'runs/{runId}/evidence', 'runs/{runId}/events', 'runs/{runId}/events/stream', 'events/stream']) {
      const operation = document.body.paths[`/api/v1/workspaces/{ws}/${path}`]?.get;
      expect({ path, permission: operation?.['x-required-permission'], documented: Boolean(operation?.responses['200']) }).toEqual({ path, permission: 'inspect', documented: true });
    }
  });

  it('reports a chain intact, then a tampered event with its stream, version and position', async () => {
    const clean = await env.sut.request<AuditReport>('GET', api('/audit/verify'), { headers: bearer(viewer) });
    expect(clean.status).toBe(200);
    expect(clean.body).toMatchObject({ ok: true, breaks: [] });
    expect(clean.body.eventsChecked).toBeGreaterThan(10);

    const { rows } = await env.sut.db.pool.query<{ global_position: string; stream_id: string; stream_version: string }>(
      `SELECT global_position, stream_id, stream_version FROM events WHERE workspace_id = $1 AND stream_id LIKE 'deployment-%' ORDER BY global_position LIMIT 1`,
      [env.ws],
    );
    const victim = rows[0]!;
    // Only a role that can switch triggers off can rewrite history; the chain still shows it.
    const client = await env.sut.db.pool.connect();
    try {
      await client.query(`SET session_replication_role = replica`);
      await client.query(`UPDATE events SET data = jsonb_set(data, '{tampered}', 'true') WHERE global_position = $1`, [victim.global_position]);
      await client.query(`SET session_replication_role = origin`);
    } finally {
      client.release();
    }

    const sut = await env.sut.request<AuditReport>('GET', api('/audit/verify'), { headers: bearer(viewer) });

    expect(sut.body.ok).toBe(false);
    expect(sut.body.breaks).toEqual([
      { stream: victim.stream_id, streamVersion: Number(victim.stream_version), globalPosition: Number(victim.global_position), reason: 'digest_mismatch', detail: 'content does not match its digest' },
    ]);
  });
});
