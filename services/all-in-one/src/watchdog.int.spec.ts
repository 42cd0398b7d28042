import { jetstreamManager } from '@nats-io/jetstream';
import { topology } from '@packetagent/bus';
import { StuckRunWatchdog } from '@packetagent/supervisor';
import { eventually } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

// Real: Postgres, NATS JetStream and Redis, and the whole app twice in this process on them: one
// replica without the supervisor (the API, intake, policy, the relay) and, once a run has been
// admitted with no supervisor about, a second replica with the supervisor and its watchdog. The
// watchdog sweeps when it takes the lead and then only when a test asks (its interval is longer
// than the suite), so every sweep a test relies on is one it can name.

const ENDED = ['succeeded', 'failed', 'cancelled', 'abandoned', 'rejected', 'expired', 'revoked', 'budget_exhausted', 'timed_out'];
const PASSWORD = 'correct horse battery staple';

function worker(name: string, tools: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Do the task.
tools: ${tools}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';
const ASK_THEN_FINISH = `turns:\n  - toolCalls: [{ name: ask_owner, arguments: { question: "Go on?" } }]\n  - toolCalls: [${FINISH}]\n`;

interface Attention {
  id: string;
  runId: string;
  tool: string;
  state: string;
  arguments: { kind?: string; evidence?: Record<string, unknown> };
}

interface RunCareEvent {
  type: string;
  data: Record<string, unknown>;
  actor: { kind: string; id: string };
}

describe(StuckRunWatchdog.name, () => {
  let api: ExecutionApp;
  let supervisor: ExecutionApp | null = null;
  let member: string;
  let viewer: string;
  let outsider: { ws: string; key: string };

  const keyId = (key: string) => /^pa_([a-f0-9]{20})_/.exec(key)![1]!;
  const path = (suffix: string, ws = api.ws) => `/api/v1/workspaces/${ws}${suffix}`;
  const watchdog = () => supervisor!.sut.app.get(StuckRunWatchdog);
  const row = async (runId: string) =>
    (await api.sut.db.pool.query<{ status: string; waiting_on: string | null; quarantine_reason: string | null; claims: number }>(
      'SELECT status, waiting_on, quarantine_reason, claims FROM supervisor.runs WHERE run_id = $1',
      [runId],
    )).rows[0];
  const attentionOf = async (runId: string): Promise<Attention[]> =>
    (await api.sut.request<{ items: Attention[] }>('GET', path('/attention?limit=500'), { headers: bearer(api.owner) })).body.items.filter((item) => item.runId === runId);
  const runCare = async (runId: string): Promise<RunCareEvent[]> =>
    (await api.sut.db.pool.query<RunCareEvent>('SELECT type, data, metadata->\'actor\' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version', [`runcare-${runId}`])).rows;

  beforeAll(async () => {
    api = await startExecutionApp({ env: { PACKETAGENT_SUPERVISOR_ENABLED: 'false' } });
    const key = async (role: string) =>
      (await api.sut.request<{ secret: string }>('POST', path('/api-keys'), { body: { name: role, role }, headers: bearer(api.owner) })).body.secret;
    member = await key('member');
    viewer = await key('viewer');
    const login = await api.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: PASSWORD } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join(';'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const other = await api.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const otherKey = await api.sut.request<{ secret: string }>('POST', path('/api-keys', other.body.id), { body: { name: 'other', role: 'owner' }, headers: session });
    outsider = { ws: other.body.id, key: otherKey.body.secret };
  }, 60_000);

  afterAll(async () => {
    await supervisor?.close();
    await api?.close();
  });

  it('claims, in the first sweep of a supervisor that starts, a run admitted while none ran whose wake message is gone', async () => {
    api.writeScript('orphan', `turns:\n  - toolCalls: [${FINISH}]\n`);
    const runId = await api.startRun(await api.deploy(worker('orphan', '[]')));
    const topo = topology(api.sut.bus.prefix);
    const jsm = await jetstreamManager(api.sut.bus.nc);
    const wake = await eventually(
      async () => (await jsm.streams.getMessage(topo.eventsStream, { last_by_subj: `${topo.eventsSubjectRoot}.${api.ws}.run.run.admitted` }).catch(() => null)) ?? undefined,
      { what: 'the admission in PA_EVENTS' },
    );
    expect(wake.json<{ stream: string }>().stream).toBe(`run-${runId}`);
    expect(await jsm.streams.deleteMessage(topo.eventsStream, wake.seq)).toBe(true);
    // The relay records its cursor after publishing; the sweep reads admissions up to it.
    const position = Number(wake.header.get('Pa-Global-Position'));
    await eventually(async () => Number((await api.sut.db.pool.query<{ position: string }>(`SELECT position FROM relay_cursors WHERE name = 'default'`)).rows[0]?.position ?? 0) >= position, {
      what: 'the relay cursor to pass the admission',
    });
    expect(await row(runId)).toBeUndefined();

    supervisor = await startExecutionApp({
      replicaOf: api,
      env: { PACKETAGENT_SUPERVISOR_ENABLED: 'true', PACKETAGENT_SUPERVISOR_WATCHDOG_INTERVAL_MS: '3600000', PACKETAGENT_SUPERVISOR_WATCHDOG_GRACE_MS: '0' },
    });

    expect(await api.waitForState(runId, ENDED)).toBe('succeeded');
    expect(watchdog().status()).toMatchObject({ leader: true, sweeps: 1, wakesTotal: 1 });
    expect((await row(runId))?.claims).toBe(1);
  }, 60_000);

  it('asks a person, once, about a run that waits on an attention record that is gone', async () => {
    api.writeScript('forgotten', ASK_THEN_FINISH);
    const runId = await api.startRun(await api.deploy(worker('forgotten', '[{ tool: ask_owner }]')));
    const waiting = await eventually(async () => {
      const current = await row(runId);
      return current?.status === 'waiting' && current.waiting_on !== null && current;
    }, { what: 'the run to wait on its question' });
    await api.sut.db.pool.query('DELETE FROM policy.attention WHERE attention_id = $1', [waiting.waiting_on]);

    const first = await watchdog().sweep();

    expect(first?.findings).toEqual(expect.arrayContaining([expect.objectContaining({ runId, cause: 'wait_lost' })]));
    const raised = (await attentionOf(runId)).filter((item) => item.arguments.kind === 'wait_lost');
    expect(raised).toEqual([
      expect.objectContaining({
        tool: 'supervisor',
        state: 'open',
        arguments: { kind: 'wait_lost', evidence: expect.objectContaining({ cause: 'wait_lost', attentionId: waiting.waiting_on, reason: expect.stringMatching(/no longer has/) }) },
      }),
    ]);

    const second = await watchdog().sweep();
    expect(second?.findings).toEqual(expect.arrayContaining([expect.objectContaining({ runId, cause: 'wait_lost', attentionId: raised[0]!.id })]));
    expect(second?.actions.filter((action) => action.runId === runId)).toEqual([]);
    expect((await attentionOf(runId)).filter((item) => item.arguments.kind === 'wait_lost')).toHaveLength(1);

    // A person stops it: the cause is gone, and so is the finding.
    expect((await api.sut.request('POST', path(`/runs/${runId}/stop`), { body: { reason: 'its question was lost' }, headers: bearer(api.owner) })).status).toBe(200);
    expect(await api.waitForState(runId, ENDED)).toBe('cancelled');
    expect((await watchdog().sweep())?.findings.filter((finding) => finding.runId === runId)).toEqual([]);
  }, 60_000);

  /** A run waiting on its question, whose model turn is edited behind the store's back, quarantined when the answer wakes it. */
  async function quarantinedRun(name: string): Promise<{ runId: string; repair: () => Promise<void> }> {
    api.writeScript(name, ASK_THEN_FINISH);
    const runId = await api.startRun(await api.deploy(worker(name, '[{ tool: ask_owner }]')));
    await eventually(async () => (await row(runId))?.status === 'waiting', { what: 'the run to wait on its question' });
    const client = await api.sut.db.pool.connect();
    let original: unknown;
    try {
      original = (await client.query<{ data: unknown }>(`SELECT data FROM events WHERE stream_id = $1 AND type = 'run.model_turn'`, [`run-${runId}`])).rows[0]!.data;
      await client.query("SET session_replication_role = 'replica'");
      await client.query(`UPDATE events SET data = jsonb_set(data, '{text}', '"edited"') WHERE stream_id = $1 AND type = 'run.model_turn'`, [`run-${runId}`]);
      await client.query("SET session_replication_role = 'origin'");
    } finally {
      client.release();
    }
    const question = await eventually(async () => (await attentionOf(runId)).find((item) => item.state === 'open'), { what: 'the question' });
    expect((await api.sut.request('POST', path(`/attention/${question.id}/approve`), { body: { scope: 'once' }, headers: bearer(api.owner) })).status).toBe(200);
    await eventually(async () => (await row(runId))?.status === 'quarantined', { what: 'the run to be quarantined' });
    return {
      runId,
      repair: async () => {
        const repairing = await api.sut.db.pool.connect();
        try {
          await repairing.query("SET session_replication_role = 'replica'");
          await repairing.query(`UPDATE events SET data = $2 WHERE stream_id = $1 AND type = 'run.model_turn'`, [`run-${runId}`, original]);
          await repairing.query("SET session_replication_role = 'origin'");
        } finally {
          repairing.release();
        }
      },
    };
  }

  it('releases a quarantined run: quarantined again with the reason while its history is broken, driven to its end once repaired', async () => {
    const { runId, repair } = await quarantinedRun('released');
    const release = (key: string, ws = api.ws) => api.sut.request<Record<string, unknown>>('POST', path(`/runs/${runId}/release`, ws), { body: {}, headers: bearer(key) });

    expect(await release(member)).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect(await release(viewer)).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await release(outsider.key)).status).toBe(404);
    expect(await release(outsider.key, outsider.ws)).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    expect((await row(runId))?.status).toBe('quarantined');
    const found = await watchdog().sweep();
    expect(found?.findings).toEqual(expect.arrayContaining([expect.objectContaining({ runId, cause: 'quarantined' })]));
    // The supervisor raised it when it quarantined the run; the sweep's request answered that same record.
    expect((await attentionOf(runId)).filter((item) => item.arguments.kind === 'run_quarantined')).toHaveLength(1);

    const still = await release(api.owner);
    expect(still).toMatchObject({ status: 200, body: { runId, outcome: 'quarantined', status: 'quarantined', quarantineReason: expect.stringMatching(/does not match its digest/) } });

    await repair();
    const resumed = await release(api.owner);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ outcome: 'resumed', quarantineReason: null });
    expect(await api.waitForState(runId, ENDED)).toBe('succeeded');
    expect(await release(api.owner)).toMatchObject({ status: 409, body: { code: 'run_not_quarantined' } });

    const care = await runCare(runId);
    expect(care.map((event) => [event.type, event.actor])).toEqual([
      ['quarantine.released', { kind: 'api_key', id: keyId(api.owner) }],
      ['quarantine.released', { kind: 'api_key', id: keyId(api.owner) }],
    ]);
    expect(care[0]!.data).toMatchObject({ runId, quarantineReason: expect.stringMatching(/does not match its digest/) });
  }, 90_000);

  it('ends a quarantined run as abandoned(quarantined) at the head of its stream, with the person who ended it', async () => {
    const { runId } = await quarantinedRun('ended');
    const end = (key: string, body: unknown = { reason: 'history edited; rerun by hand' }) =>
      api.sut.request<Record<string, unknown>>('POST', path(`/runs/${runId}/end`), { body, headers: bearer(key) });
    const head = (await api.events(runId)).at(-1)!.version;

    expect(await end(member)).toMatchObject({ status: 403, body: { code: 'permission_denied' } });
    expect((await end(api.owner, {})).status).toBe(400);

    const ended = await end(api.owner);

    expect(ended).toMatchObject({ status: 200, body: { runId, status: 'terminal', endedAtVersion: head + 1, quarantineReason: expect.stringMatching(/does not match its digest/) } });
    const last = (await api.sut.db.pool.query<{ type: string; data: Record<string, unknown>; stream_version: string; actor: unknown }>(
      `SELECT type, data, stream_version, metadata->'actor' AS actor FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1`,
      [`run-${runId}`],
    )).rows[0]!;
    expect(last).toMatchObject({ type: 'run.abandoned', stream_version: String(head + 1), actor: { kind: 'api_key', id: keyId(api.owner) } });
    expect(last.data).toMatchObject({ cause: 'quarantined', detail: expect.stringContaining('history edited; rerun by hand') });
    expect(await api.waitForState(runId, ENDED)).toBe('abandoned');
    expect(await runCare(runId)).toEqual([
      { type: 'quarantine.ended', data: expect.objectContaining({ runId, reason: 'history edited; rerun by hand', abandonedAtVersion: head + 1 }), actor: { kind: 'api_key', id: keyId(api.owner) } },
    ]);
    expect(await end(api.owner)).toMatchObject({ status: 409, body: { code: 'run_not_quarantined' } });
    const supervision = await api.sut.request('GET', path(`/runs/${runId}/supervision`), { headers: bearer(viewer) });
    expect(supervision).toMatchObject({ status: 200, body: { runId, status: 'terminal' } });
  }, 90_000);

  it('reads 0 runs without an owner once every run is settled, on every replica that drives runs', async () => {
    const report = await watchdog().sweep();
    expect(report?.findings).toEqual([]);

    const metrics = await supervisor!.sut.request('GET', '/metrics');
    const gauge = metrics.text.split('\n').filter((line) => line.startsWith('packetagent_runs_without_owner{'));
    expect(gauge.sort()).toEqual(
      ['lapsed', 'quarantined', 'unclaimed', 'wait_answered', 'wait_lost'].map((cause) => `packetagent_runs_without_owner{cause="${cause}"} 0`),
    );
    // Described in the API document, each route with the permission it needs.
    const document = (await api.sut.request<{ paths: Record<string, Record<string, { 'x-required-permission'?: string }>> }>('GET', '/api/v1/openapi.json')).body;
    const runPath = '/api/v1/workspaces/{ws}/runs/{runId}';
    expect([
      document.paths[`${runPath}/supervision`]?.['get']?.['x-required-permission'],
      document.paths[`${runPath}/release`]?.['post']?.['x-required-permission'],
      document.paths[`${runPath}/end`]?.['post']?.['x-required-permission'],
    ]).toEqual(['inspect', 'run-recovery', 'run-recovery']);
    // The events the releases and ends recorded are ones the projector decodes.
    const overview = await api.sut.request<{ health: { gaps: number } }>('GET', path('/overview'), { headers: bearer(viewer) });
    expect(overview.body.health.gaps).toBe(0);
  });
});
