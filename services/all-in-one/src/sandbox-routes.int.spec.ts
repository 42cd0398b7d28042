import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { SandboxRoutesModule } from '@packetagent/gateway';
import { TERMINAL_RUN_STATES, type ExecRecord, type ExecResult, type ExecSummary, type SandboxStatus } from '@packetagent/contracts';
import { eventually, requestJson } from '@packetagent/testing';
import { bearer, startTestApp, type TestApp } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';
import { SseClient } from './testing/sse-client.testkit';

// Real: the whole all-in-one app (gateway, sandbox service with bubblewrap at /usr/bin/bwrap,
// supervisor, intake) on Postgres, NATS and Redis. The gateway reaches the sandbox only over
// NATS, as it does when they are deployed apart.

interface Accepted {
  execId: string;
  state: 'running';
  links: { self: string; stream: string; output: string; cancel: string };
}

interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

/** The named events of an exec's stream (the server closes it after `ended`). */
function eventsOf(client: SseClient): Array<{ event: string; data: Record<string, unknown> }> {
  return client.frames.filter((frame) => frame.event !== undefined).map((frame) => ({ event: frame.event!, data: JSON.parse(frame.data!) as Record<string, unknown> }));
}

const PASSWORD = 'correct horse battery staple';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe(SandboxRoutesModule.name, () => {
  let env: ExecutionApp;
  let viewer: string;
  let outsider: { ws: string; key: string };
  const streams: SseClient[] = [];

  const path = (suffix: string, ws = env.ws) => `/api/v1/workspaces/${ws}/sandbox${suffix}`;
  const post = <T = Record<string, unknown>>(suffix: string, body: unknown, key = env.owner) => env.sut.request<T>('POST', path(suffix), { body, headers: bearer(key) });
  const get = <T = Record<string, unknown>>(suffix: string, key = env.owner, ws = env.ws) => env.sut.request<T>('GET', path(suffix, ws), { headers: bearer(key) });
  const open = async (url: string, key = env.owner) => {
    const client = await SseClient.open(`${env.sut.baseUrl}${url}`, bearer(key));
    streams.push(client);
    return client;
  };
  const execCount = async () => Number((await env.sut.db.pool.query<{ n: string }>('SELECT count(*) AS n FROM sandbox.execs WHERE workspace_id = $1', [env.ws])).rows[0]!.n);

  beforeAll(async () => {
    env = await startExecutionApp({ env: { PACKETAGENT_SSE_HEARTBEAT_MS: '1000' } });
    viewer = (await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${env.ws}/api-keys`, { body: { name: 'viewer', role: 'viewer' }, headers: bearer(env.owner) })).body.secret;
    const login = await env.sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'operator@example.com', password: PASSWORD } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const other = await env.sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const key = await env.sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'other', role: 'owner' }, headers: session });
    outsider = { ws: other.body.id, key: key.body.secret };
  }, 60_000);
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => env?.close());

  it('says which driver commands run in, the limits that apply and what is not enforced, to any role', async () => {
    const answer = await get<SandboxStatus>('/status', viewer);

    expect(answer.status).toBe(200);
    expect(answer.body.driver).toBe('bubblewrap');
    expect(answer.body.drivers).toContainEqual(expect.objectContaining({ name: 'bubblewrap', available: true, unenforced: expect.any(Array) }));
    expect(answer.body.defaults.wallTimeMs).toBeLessThanOrEqual(answer.body.maximum.wallTimeMs);
  });

  it('runs node --version and, with wait, answers 200 with the whole result', async () => {
    const answer = await post<ExecResult>('/exec', { command: 'node --version', wait: true });

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ execId: expect.stringMatching(/^op-[0-9a-f-]{36}$/), workspaceId: env.ws, runId: null, driver: 'bubblewrap', state: 'exited', exitCode: 0, limit: null });
    expect(answer.body.stdout).toMatchObject({ preview: `${process.version}\n`, bytes: process.version.length + 1, truncated: false });

    const record = await get<ExecRecord>(`/exec/${answer.body.execId}`, viewer);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ argv: ['node', '--version'], state: 'exited', requestedBy: { kind: 'api_key' }, result: { exitCode: 0 } });
    const list = await get<{ items: ExecSummary[] }>('/exec?limit=5', viewer);
    expect(list.body.items.map((item) => item.execId)).toContain(answer.body.execId);
  });

  it('answers 202 as soon as a command has started, then streams its live output and its end', async () => {
    const program = 'let i = 0; const t = setInterval(() => { console.log(`tick ${i}`); if (++i === 20) clearInterval(t); }, 100);';
    const answer = await post<Accepted>('/exec', { argv: ['node', '-e', program] });

    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({
      execId: expect.stringMatching(/^op-/),
      state: 'running',
      links: { self: path(`/exec/${answer.body.execId}`), stream: path(`/exec/${answer.body.execId}/stream`), output: path(`/exec/${answer.body.execId}/output`), cancel: path(`/exec/${answer.body.execId}/cancel`) },
    });
    expect(answer.headers.get('location')).toBe(answer.body.links.self);

    const stream = await open(answer.body.links.stream, viewer);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toContain('text/event-stream');
    await eventually(() => stream.ended, { timeoutMs: 30_000, what: 'the stream to close after the end' });

    const events = eventsOf(stream);
    expect(events[0]).toEqual({ event: 'started', data: { execId: answer.body.execId, argv: ['node', '-e', program], driver: 'bubblewrap', startedAt: expect.any(String) } });
    const outputs = events.filter((e) => e.event === 'output');
    expect(outputs.length).toBeGreaterThan(0);
    const live = outputs.map((e) => e.data['text']).join('');
    const ended = events.at(-1)!;
    expect(ended.event).toBe('ended');
    const result = ended.data['result'] as ExecResult;
    expect(result).toMatchObject({ state: 'exited', exitCode: 0 });
    const whole = Array.from({ length: 20 }, (_, i) => `tick ${i}\n`).join('');
    expect(result.stdout.preview).toBe(whole);
    // Live output is what was published after the stream opened: the end of the whole, in order.
    expect(whole.endsWith(live)).toBe(true);
    expect(live).toContain('tick 19\n');

    // Once it has ended, the stream is its ended event alone.
    const again = await open(answer.body.links.stream);
    await eventually(() => again.ended, { what: 'the second stream to close' });
    expect(eventsOf(again)).toEqual([{ event: 'ended', data: { result } }]);
  });

  it('cancels a sleep 30: it ends killed with limit cancelled, and its stream says so', async () => {
    const answer = await post<Accepted>('/exec', { command: 'sleep 30' });
    expect(answer.status).toBe(202);
    const stream = await open(answer.body.links.stream);
    await eventually(() => eventsOf(stream).length > 0, { what: 'the started event' });
    const early = await get(`/exec/${answer.body.execId}/output`);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: 'exec_running_conflict' });

    const cancelledAt = Date.now();
    const cancel = await post<{ found: boolean }>(`/exec/${answer.body.execId}/cancel`, {});
    expect(cancel.status).toBe(200);
    expect(cancel.body).toEqual({ found: true });

    await eventually(() => stream.ended, { timeoutMs: 10_000, what: 'the stream to end' });
    expect(Date.now() - cancelledAt).toBeLessThan(5_000);
    expect(eventsOf(stream).at(-1)).toMatchObject({ event: 'ended', data: { result: { state: 'killed', limit: 'cancelled', exitCode: null } } });
    const record = await get<ExecRecord>(`/exec/${answer.body.execId}`);
    expect(record.body).toMatchObject({ state: 'killed', limit: 'cancelled', result: { state: 'killed', limit: 'cancelled' } });
    expect((await post<{ found: boolean }>(`/exec/${answer.body.execId}/cancel`, {})).body).toEqual({ found: false });
  });

  it('runs a command to its end after the client that asked to wait for it has gone', async () => {
    const url = new URL(`${env.sut.baseUrl}${path('/exec')}`);
    const asked = httpRequest(url, { method: 'POST', headers: { ...bearer(env.owner), 'content-type': 'application/json' } });
    asked.on('error', () => undefined);
    asked.end(JSON.stringify({ command: 'sleep 1.25', wait: true }));
    const started = await eventually(async () => (await get<{ items: ExecSummary[] }>('/exec')).body.items.find((item) => item.argv.join(' ') === 'sleep 1.25'), { what: 'the exec to be recorded' });

    // The client leaves: its connection is closed under the request.
    asked.destroy();

    const record = await eventually(async () => {
      const answer = await get<ExecRecord>(`/exec/${started.execId}`);
      return answer.body.result !== null && answer.body;
    }, { timeoutMs: 15_000, what: 'the exec to end' });
    expect(record).toMatchObject({ state: 'exited', exitCode: 0, limit: null });
  });

  it('downloads the whole output of each stream, verified, with its SHA-256 in X-Content-SHA256', async () => {
    const program = "process.stdout.write('0123456789'.repeat(30000)); process.stderr.write('warned\\n');";
    const { body: result } = await post<ExecResult>('/exec', { argv: ['node', '-e', program], wait: true });
    expect(result.stdout).toMatchObject({ bytes: 300_000, truncated: true });

    const fetchOutput = (stream: string) => fetch(`${env.sut.baseUrl}${path(`/exec/${result.execId}/output?stream=${stream}`)}`, { headers: bearer(viewer) });
    const stdout = await fetchOutput('stdout');
    const bytes = Buffer.from(await stdout.arrayBuffer());
    expect(stdout.status).toBe(200);
    expect(stdout.headers.get('content-type')).toBe('application/octet-stream');
    expect(bytes.length).toBe(300_000);
    expect(sha256(bytes)).toBe(result.stdout.digest);
    expect(stdout.headers.get('x-content-sha256')).toBe(result.stdout.digest);
    expect(bytes.toString('utf8')).toBe('0123456789'.repeat(30_000));

    const stderr = await fetchOutput('stderr');
    expect(await stderr.text()).toBe('warned\n');
    expect(stderr.headers.get('x-content-sha256')).toBe(result.stderr.digest);
    expect((await fetchOutput('stdin')).status).toBe(400);
  });

  it.each([
    ['shell metacharacters', { command: 'ls; cat /etc/passwd' }, 'command', /shell metacharacters/],
    ['a cwd outside the workspace', { command: 'ls', cwd: '../..' }, 'cwd', /escapes the workspace/],
    ['a secret-looking environment name', { command: 'ls', env: { AWS_SECRET_ACCESS_KEY: 'x' } }, 'env.AWS_SECRET_ACCESS_KEY', /looks like a secret/],
    ['a wall time above the maximum', { command: 'ls', limits: { wallTimeMs: 2 * 3_600_000 } }, 'limits.wallTimeMs', /above the maximum 3600000/],
    ['a program given as a path', { argv: ['/bin/sh', '-c', 'id'] }, 'argv[0]', /plain name/],
  ])('refuses %s with 422 exec_refused naming the field, and runs nothing', async (_what, body, field, message) => {
    const before = await execCount();

    const answer = await post<Problem>('/exec', body);

    expect(answer.status).toBe(422);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body).toMatchObject({ code: 'exec_refused', status: 422, errors: [{ path: field, message: expect.stringMatching(message) }] });
    expect(await execCount()).toBe(before);
  });

  it('answers 400 for a request that is not valid, 413 for a huge body, and never 5xx for any bytes sent', async () => {
    const before = await execCount();
    const invalid = [
      { command: 'ls', limits: { wallTimeMs: 25 * 3_600_000 } },
      { command: 'ls', argv: ['ls'] },
      {},
      { argv: [] },
      { command: 'ls', surprise: true },
      { command: 'ls', env: { A: 'x'.repeat(40_000) } },
    ];
    for (const body of invalid) {
      const answer = await post<Problem>('/exec', body);
      expect([answer.status, answer.body.code]).toEqual([400, 'validation_failed']);
    }
    const raw = (text: string, type = 'application/json') => requestJson(env.sut.baseUrl, 'POST', path('/exec'), { raw: text, headers: { ...bearer(env.owner), 'content-type': type } });
    expect((await raw('{"command": "ls"')).status).toBe(400);
    expect((await raw('{"command": "ls"}', 'text/plain')).status).toBe(400);
    expect((await raw('<command>ls</command>', 'application/xml')).status).toBe(415);
    expect((await raw(JSON.stringify({ command: 'ls', env: { A: 'x'.repeat(2_000_000) } }))).status).toBe(413);
    // A NUL is refused at the boundary, before any route; the other characters by the id's own rule.
    for (const [id, code] of [['a%00b', 'invalid_characters'], ['a%09b', 'validation_failed'], ['a%20b', 'validation_failed'], ['%C3%A9t%C3%A9', 'validation_failed'], ['%E2%80%AE', 'validation_failed']]) {
      for (const suffix of ['', '/stream', '/output']) {
        const answer = await get<Problem>(`/exec/${id}${suffix}`);
        expect([id, suffix, answer.status, answer.body.code]).toEqual([id, suffix, 400, code]);
      }
      expect((await post(`/exec/${id}/cancel`, {})).status).toBe(400);
    }
    // Past the router's longest path parameter no route matches at all.
    expect((await get<Problem>(`/exec/${'x'.repeat(2_000)}`)).status).toBe(404);
    // An id is only a name (files and subjects use a digest of it): one that spells a path finds nothing.
    expect((await get<Problem>('/exec/..%2F..%2Fetc')).body.code).toBe('exec_not_found');
    expect((await get('/exec?limit=0')).status).toBe(400);
    expect((await get('/exec?runId=%00')).status).toBe(400);
    expect(await execCount()).toBe(before);
  });

  it('refuses a viewer anything but reading, with 403', async () => {
    const { body: done } = await post<ExecResult>('/exec', { command: 'true', wait: true });

    const run = await post<Problem>('/exec', { command: 'node --version' }, viewer);
    const cancel = await post<Problem>(`/exec/${done.execId}/cancel`, {}, viewer);

    expect(run.status).toBe(403);
    expect(run.body).toMatchObject({ code: 'permission_denied', detail: expect.stringContaining('sandbox-exec') });
    expect(cancel.status).toBe(403);
    expect((await get(`/exec/${done.execId}`, viewer)).status).toBe(200);
  });

  it("answers 404 for another workspace's exec, asked in either workspace, and for one that never was", async () => {
    const { body: mine } = await post<ExecResult>('/exec', { command: 'true', wait: true });

    for (const suffix of ['', '/output', '/stream']) {
      const foreign = await get<Problem>(`/exec/${mine.execId}${suffix}`, outsider.key, outsider.ws);
      expect([suffix, foreign.status, foreign.body.code]).toEqual([suffix, 404, 'exec_not_found']);
      expect((await get(`/exec/${mine.execId}${suffix}`, outsider.key)).status).toBe(404);
      expect((await get(`/exec/op-never${suffix}`)).status).toBe(404);
    }
    const stream = await open(path(`/exec/${mine.execId}/stream`, outsider.ws), outsider.key);
    expect(stream.status).toBe(404);
    expect(stream.contentType).toContain('application/problem+json');
    expect((await env.sut.request<{ found: boolean }>('POST', path(`/exec/${mine.execId}/cancel`, outsider.ws), { body: {}, headers: bearer(outsider.key) })).body).toEqual({ found: false });
    const theirs = await env.sut.request<{ items: ExecSummary[] }>('GET', path('/exec', outsider.ws), { headers: bearer(outsider.key) });
    expect(theirs.body.items).toEqual([]);
  });

  it("runs a command in a run's workspace, finds a run_command call's exec under <runId>:<callId>, and refuses a run of another workspace", async () => {
    env.writeScript('probe', 'turns:\n  - toolCalls: [{ name: run_command, arguments: { command: "node --version" } }]\n  - toolCalls: [{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }]\n');
    const deploymentId = await env.deploy(`apiVersion: packetagent/v1
kind: Worker
name: probe
model: { provider: scripted, model: probe }
instructions: Run the command.
tools: [{ tool: run_command, verbs: [exec], resources: ["node --version"], approval: never }]
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`);
    const runId = await env.startRun(deploymentId);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 60_000)).toBe('succeeded');

    const list = await get<{ items: ExecSummary[] }>(`/exec?runId=${runId}`, viewer);
    expect(list.body.items).toHaveLength(1);
    const call = list.body.items[0]!;
    expect(call.execId).toMatch(new RegExp(`^${runId}:`));
    const prepared = (await env.events(runId)).find((event) => event.type === 'effect.prepared' && event.data['tool'] === 'run_command')!;
    expect(call.execId).toBe(`${runId}:${String(prepared.data['callId'])}`);
    const stream = await open(path(`/exec/${encodeURIComponent(call.execId)}/stream`), viewer);
    await eventually(() => stream.ended, { what: "the ended run_command's stream to close" });
    expect(eventsOf(stream)).toEqual([{ event: 'ended', data: { result: expect.objectContaining({ runId, exitCode: 0, stdout: expect.objectContaining({ preview: `${process.version}\n` }) }) } }]);

    const inRun = await post<ExecResult>('/exec', { command: 'node --version', runId, wait: true });
    expect(inRun.status).toBe(200);
    expect(inRun.body).toMatchObject({ runId, exitCode: 0 });
    const before = await execCount();
    const foreign = await env.sut.request<Problem>('POST', path('/exec', outsider.ws), { body: { command: 'ls', runId, wait: true }, headers: bearer(outsider.key) });
    expect(foreign.status).toBe(404);
    expect((await post('/exec', { command: 'ls', runId: '0193b000-0000-7000-8000-00000000dead' })).status).toBe(404);
    expect(await execCount()).toBe(before);
  }, 90_000);

  it('documents every sandbox route with its permission and answers', async () => {
    const document = (await env.sut.request<{ paths: Record<string, Record<string, { 'x-required-permission'?: string; responses: Record<string, { content?: Record<string, unknown> }> }>> }>('GET', '/api/v1/openapi.json')).body;
    const route = (p: string, method: string) => document.paths[`/api/v1/workspaces/{ws}/sandbox${p}`]?.[method];

    expect(route('/exec', 'post')?.['x-required-permission']).toBe('sandbox-exec');
    expect(Object.keys(route('/exec', 'post')?.responses ?? {})).toEqual(expect.arrayContaining(['200', '202', 'default']));
    expect(route('/exec/{id}/cancel', 'post')?.['x-required-permission']).toBe('sandbox-exec');
    for (const [p, method] of [['/exec', 'get'], ['/exec/{id}', 'get'], ['/exec/{id}/stream', 'get'], ['/exec/{id}/output', 'get'], ['/status', 'get']] as const) {
      expect([p, route(p, method)?.['x-required-permission']]).toEqual([p, 'inspect']);
    }
    expect(route('/exec/{id}/stream', 'get')?.responses['200']?.content).toHaveProperty(['text/event-stream']);
    expect(route('/exec/{id}/output', 'get')?.responses['200']?.content).toHaveProperty(['application/octet-stream']);
  });
});

describe('sandbox routes without a driver', () => {
  let sut: TestApp;
  let owner: string;

  beforeAll(async () => {
    // Docker chosen and no engine at the socket: nothing can run, and nothing falls back to the host.
    sut = await startTestApp({ PACKETAGENT_SANDBOX_DRIVER: 'docker', PACKETAGENT_SANDBOX_DOCKER_HOST: 'unix:///nonexistent/docker.sock' });
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', { body: { token: sut.setupToken, email: 'none@example.com', password: PASSWORD, workspace: 'None' } });
    owner = `${setup.body.workspaceId} ${setup.body.apiKey}`;
  }, 60_000);
  afterAll(() => sut?.close());

  it('answers 503 sandbox_unavailable naming what is missing, and the status says no driver', async () => {
    const [ws, key] = owner.split(' ') as [string, string];

    const answer = await sut.request<Problem>('POST', `/api/v1/workspaces/${ws}/sandbox/exec`, { body: { command: 'node --version' }, headers: bearer(key) });
    const status = await sut.request<SandboxStatus>('GET', `/api/v1/workspaces/${ws}/sandbox/status`, { headers: bearer(key) });

    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'sandbox_unavailable', detail: expect.stringMatching(/no sandbox driver is available.*docker/) });
    expect(status.body.driver).toBeNull();
    expect(status.body.drivers).toContainEqual(expect.objectContaining({ name: 'docker', available: false }));
  });
});
