import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, hostProcesses } from '@packetagent/testing';
import { isRunState, isTerminal, RUN_TERMINAL_EVENT_TYPES, runStreamId } from '@packetagent/contracts';
import { bearer } from './testing/app.testkit';
import { sharedInfrastructure, startAppProcess, type AppProcess, type SharedInfrastructure } from './testing/app-process.testkit';
import { RecordingServer } from './testing/execution.testkit';

/**
 * Supervisors as separate processes on one Postgres, NATS and Redis, SIGKILLed at each point
 * of a run where a crash could repeat or lose an effect. The far side counts effects by their
 * Idempotency-Key, as an API that honours the header does.
 */
describe('supervisor recovery across processes', () => {
  let infra: SharedInfrastructure;
  let far: RecordingServer;
  let scriptsDir: string;
  let slowScriptsDir: string;
  let ws: string;
  let owner: string;
  const processes: AppProcess[] = [];

  const start = async (name: string, env: Record<string, string> = {}, scripts = scriptsDir) => {
    const app = await startAppProcess(infra, name, {
      PACKETAGENT_SCRIPTS_DIR: scripts,
      PACKETAGENT_HTTP_ALLOW_PRIVATE: `127.0.0.1:${far.port}`,
      PACKETAGENT_HTTP_IDEMPOTENCY_KEY_ORIGINS: '',
      ...env,
    });
    processes.push(app);
    return app;
  };
  const script = (name: string, yaml: string, dir = scriptsDir) => writeFileSync(join(dir, `${name}.yaml`), yaml);
  const effectsByKey = () => new Set(far.requests.filter((request) => request.method !== 'GET').map((request) => request.headers['idempotency-key'])).size;

  async function deploy(app: AppProcess, name: string, tools: string, extra = ''): Promise<string> {
    const yaml = `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Do the task.
tools: ${tools}
${extra}
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
    const worker = await app.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/workers`, { body: { name }, headers: bearer(owner) });
    await app.request('POST', `/api/v1/workspaces/${ws}/workers/${worker.body.id}/versions`, { raw: yaml, headers: { ...bearer(owner), 'content-type': 'application/yaml' } });
    const deployment = await app.request<{ id: string }>('POST', `/api/v1/workspaces/${ws}/deployments`, { body: { workerId: worker.body.id, acceptMissing: true }, headers: bearer(owner) });
    expect(deployment.status).toBe(201);
    return deployment.body.id;
  }

  const startRun = async (app: AppProcess, deploymentId: string) =>
    (await app.request<{ runId: string }>('POST', `/api/v1/workspaces/${ws}/deployments/${deploymentId}/runs`, { body: { input: {} }, headers: bearer(owner) })).body.runId;

  const stateOf = async (app: AppProcess, runId: string) => (await app.request<{ state: string }>('GET', `/api/v1/workspaces/${ws}/runs/${runId}`, { headers: bearer(owner) })).body.state;

  const waitTerminal = (app: AppProcess, runId: string, timeoutMs = 30_000) =>
    eventually(async () => {
      const state = await stateOf(app, runId);
      return isRunState(state) && isTerminal(state) && state;
    }, { timeoutMs, what: `run ${runId} to end` });

  const events = async (runId: string) =>
    (await infra.db.pool.query<{ type: string; data: Record<string, unknown> }>('SELECT type, data FROM events WHERE stream_id = $1 ORDER BY stream_version', [runStreamId(runId)])).rows;

  beforeAll(async () => {
    infra = await sharedInfrastructure();
    far = await new RecordingServer().start();
    // Like an API honouring Idempotency-Key: a repeated key is answered without acting again.
    scriptsDir = mkdtempSync(join(tmpdir(), 'pa-scripts-'));
    slowScriptsDir = mkdtempSync(join(tmpdir(), 'pa-scripts-slow-'));
    const first = await start('setup');
    const setup = await first.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
      body: { token: infra.setupToken, email: 'operator@example.com', password: 'correct horse battery staple', workspace: 'Recovery' },
    });
    ws = setup.body.workspaceId;
    owner = setup.body.apiKey;
    await first.stop();
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((app) => app.kill()));
    await far?.close();
    await infra?.cleanup();
    rmSync(scriptsDir, { recursive: true, force: true });
    rmSync(slowScriptsDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    far.requests.length = 0;
    far.hold = null;
  });

  const putThenFinish = (name: string, method: 'PUT' | 'POST') =>
    script(name, `turns:
  - toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/effects/${name}", method: ${method}, body: "once" } }]
  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]
`);
  const grant = (method: string) => `[{ tool: http_fetch, verbs: [${method}], resources: ["${far.origin}/*"], approval: never }]`;

  it('finishes on the other replica after a SIGKILL mid model call, asking the model again and nothing else', async () => {
    putThenFinish('mid-model', 'PUT');
    script('mid-model', `turns:
  - { text: thinking, delayMs: 60000, toolCalls: [{ name: http_fetch, arguments: { url: "${far.origin}/effects/mid-model", method: PUT, body: "once" } }] }
  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]
`, slowScriptsDir);
    const a = await start('a-mid-model', {}, slowScriptsDir);
    const deploymentId = await deploy(a, 'mid-model', grant('PUT'));
    const runId = await startRun(a, deploymentId);
    await eventually(async () => (await events(runId)).some((event) => event.type === 'run.started'), { what: 'the run to start on a' });
    await a.kill();
    const b = await start('b-mid-model');
    expect(await waitTerminal(b, runId)).toBe('succeeded');
    expect(effectsByKey()).toBe(1);
    expect((await events(runId)).filter((event) => event.type === 'run.model_turn')).toHaveLength(2);
    await b.stop();
  }, 90_000);

  it('repeats an idempotent effect prepared before a SIGKILL, under the same key, so it happens once', async () => {
    putThenFinish('after-prepared', 'PUT');
    const a = await start('a-prepared', { PACKETAGENT_FAULT_CRASH_AFTER: 'effect.prepared' });
    const deploymentId = await deploy(a, 'after-prepared', grant('PUT'));
    const runId = await startRun(a, deploymentId);
    await a.exited;
    expect(far.requests).toEqual([]);
    const b = await start('b-prepared');
    expect(await waitTerminal(b, runId)).toBe('succeeded');
    expect(effectsByKey()).toBe(1);
    const prepared = (await events(runId)).filter((event) => event.type === 'effect.prepared').map((event) => event.data['attempt']);
    expect(prepared).toEqual([1, 2]);
    await b.stop();
  }, 90_000);

  it('repeats an idempotent effect whose call was made before a SIGKILL, and the far side applies it once', async () => {
    putThenFinish('after-call', 'PUT');
    const a = await start('a-after-call');
    const deploymentId = await deploy(a, 'after-call', grant('PUT'));
    far.hold = (request) => request.method === 'PUT' && far.requests.filter((r) => r.method === 'PUT').length === 1;
    const runId = await startRun(a, deploymentId);
    await eventually(() => far.requests.length === 1, { what: 'the call to reach the far side' });
    await a.kill();
    far.hold = null;
    const b = await start('b-after-call');
    expect(await waitTerminal(b, runId)).toBe('succeeded');
    const puts = far.requests.filter((request) => request.method === 'PUT');
    expect(puts).toHaveLength(2);
    expect(puts[0]!.headers['idempotency-key']).toBe(puts[1]!.headers['idempotency-key']);
    expect(effectsByKey()).toBe(1);
    await b.stop();
  }, 90_000);

  it('never repeats what happened before the last checkpoint', async () => {
    putThenFinish('after-checkpoint', 'POST');
    // The second checkpoint closes the act phase, after the effect completed.
    const a = await start('a-checkpoint', { PACKETAGENT_FAULT_CRASH_AFTER: 'run.checkpoint#2' });
    const deploymentId = await deploy(a, 'after-checkpoint', grant('POST'));
    const runId = await startRun(a, deploymentId);
    await a.exited;
    expect(far.requests).toHaveLength(1);
    const b = await start('b-checkpoint');
    expect(await waitTerminal(b, runId)).toBe('succeeded');
    expect(far.requests).toHaveLength(1);
    const history = await events(runId);
    expect(history.filter((event) => event.type === 'run.model_turn').map((event) => event.data['iteration'])).toEqual([1, 2]);
    expect(history.filter((event) => event.type === 'effect.completed')).toHaveLength(1);
    await b.stop();
  }, 90_000);

  it('ends a run abandoned(uncertain_effect) with attention raised when a non-idempotent effect was prepared before a SIGKILL', async () => {
    putThenFinish('uncertain', 'POST');
    const a = await start('a-uncertain', { PACKETAGENT_FAULT_CRASH_AFTER: 'effect.prepared' });
    const deploymentId = await deploy(a, 'uncertain', grant('POST'));
    const runId = await startRun(a, deploymentId);
    await a.exited;
    const b = await start('b-uncertain');
    expect(await waitTerminal(b, runId)).toBe('abandoned');
    expect(far.requests).toEqual([]);
    const ended = (await events(runId)).at(-1)!;
    expect(ended).toMatchObject({ type: 'run.abandoned', data: { cause: 'uncertain_effect', effect: { tool: 'http_fetch', verb: 'POST' } } });
    const attention = await b.request<{ items: Array<{ id: string; runId: string; state: string }> }>('GET', `/api/v1/workspaces/${ws}/attention?state=open`, { headers: bearer(owner) });
    expect(attention.body.items).toEqual(expect.arrayContaining([expect.objectContaining({ id: ended.data['attentionId'], runId, state: 'open' })]));
    await b.stop();
  }, 90_000);

  it('ends a run abandoned(uncertain_effect) after a SIGKILL during a sandboxed command, and no sandbox process outlives the lease', async () => {
    const marker = '60.9191';
    script('sandboxed', `turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "sleep ${marker}" } }]\n  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]\n`);
    const a = await start('a-sandboxed');
    const deploymentId = await deploy(a, 'sandboxed', '[{ tool: run_command, verbs: [exec], resources: ["sleep *"], approval: never }]');
    const runId = await startRun(a, deploymentId);
    const sleeping = () => hostProcesses(`sleep ${marker}`);
    await eventually(() => sleeping().length > 0, { timeoutMs: 30_000, what: 'the command to run in the sandbox' });
    await a.kill();
    const b = await start('b-sandboxed');
    expect(await waitTerminal(b, runId)).toBe('abandoned');
    const ended = (await events(runId)).at(-1)!;
    expect(ended).toMatchObject({ type: 'run.abandoned', data: { cause: 'uncertain_effect', effect: { tool: 'run_command', verb: 'exec' } } });
    // Whichever process's sandbox ran it (sandbox.exec goes to a queue group), nothing of it is
    // left once the run is taken over: it died with its process, or the takeover cancelled it, or
    // the sandbox that found its replica gone ended what that one left on this host.
    await eventually(() => sleeping().length === 0, { timeoutMs: 5_000, what: 'no sandboxed process after the takeover' });
    await b.stop();
  }, 90_000);

  it('brings 200 concurrent runs on two supervisors to one terminal state each when one is killed halfway', async () => {
    script('many', `turns:
  - { text: working, delayMs: 300, toolCalls: [{ name: propose_criteria, arguments: { criteria: [done] } }] }
  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]
`);
    const a = await start('a-many');
    const b = await start('b-many');
    const deploymentId = await deploy(a, 'many', '[{ tool: propose_criteria, approval: never }]', 'bounds: { maxConcurrentRuns: 200 }');
    const runIds: string[] = [];
    for (let i = 0; i < 200; i++) runIds.push(await startRun(i % 2 ? a : b, deploymentId));
    await eventually(async () => {
      const { rows } = await infra.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'run.succeeded' AND stream_id = ANY($1)`, [runIds.map(runStreamId)]);
      return Number(rows[0]!.n) >= 100;
    }, { timeoutMs: 60_000, what: 'half of the runs to finish' });
    await a.kill();
    await eventually(async () => {
      const { rows } = await infra.db.pool.query<{ n: string }>(
        `SELECT count(DISTINCT stream_id) AS n FROM events WHERE stream_id = ANY($1) AND type = ANY($2)`,
        [runIds.map(runStreamId), RUN_TERMINAL_EVENT_TYPES],
      );
      return Number(rows[0]!.n) === 200;
    }, { timeoutMs: 90_000, what: 'every run to end' });
    const { rows } = await infra.db.pool.query<{ stream_id: string; n: string; types: string[] }>(
      `SELECT stream_id, count(*) AS n, array_agg(type) AS types FROM events WHERE stream_id = ANY($1) AND type = ANY($2) GROUP BY stream_id`,
      [runIds.map(runStreamId), RUN_TERMINAL_EVENT_TYPES],
    );
    expect(rows).toHaveLength(200);
    expect(rows.filter((row) => Number(row.n) !== 1)).toEqual([]);
    expect(rows.filter((row) => row.types[0] !== 'run.succeeded')).toEqual([]);
    await b.stop();
  }, 180_000);
});
