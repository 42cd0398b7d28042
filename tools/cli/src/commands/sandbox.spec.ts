import { createHash } from 'node:crypto';
import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { cancelExec, execInSandbox, LIMIT_EXIT_CODE, listExecs, sandboxStatus } from './sandbox';

// Answers recorded from the API's documented shapes (SandboxCommands in libs/contracts and the
// gateway's sandbox routes): these tests cover the requests the commands build, what they print
// and their exit codes.

const BASE = '/api/v1/workspaces/ws_demo/sandbox';
const EXEC = 'op-0193a000-0000-7000-8000-0000000000cc';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function result(fields: Record<string, unknown> = {}, stdout = 'v20.0.0\n', stderr = '') {
  return {
    execId: EXEC,
    workspaceId: 'ws_demo',
    runId: null,
    driver: 'bubblewrap',
    state: 'exited',
    exitCode: 0,
    signal: null,
    limit: null,
    message: null,
    durationMs: 12,
    stdout: { preview: stdout, bytes: stdout.length, truncated: false, digest: sha256(stdout), chunks: [] },
    stderr: { preview: stderr, bytes: stderr.length, truncated: false, digest: sha256(stderr), chunks: [] },
    egress: [],
    limits: {},
    unenforced: [],
    startedAt: '2026-03-01T12:00:00.000Z',
    endedAt: '2026-03-01T12:00:00.012Z',
    ...fields,
  };
}

const accepted = { execId: EXEC, state: 'running', links: { self: `${BASE}/exec/${EXEC}`, stream: `${BASE}/exec/${EXEC}/stream`, output: `${BASE}/exec/${EXEC}/output`, cancel: `${BASE}/exec/${EXEC}/cancel` } };
const sse = (events: Array<[string, unknown]>) => [': connected\n\n', ...events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)].join('');

describe(execInSandbox.name, () => {
  let api: CliApi;
  const sut = (argv: string[]) => api.cli(argv);

  beforeAll(async () => {
    api = await new CliApi().start();
    // A route the spec did not set is the API's 404.
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.authorizations.length = 0;
    api.routes = {};
  });

  it('follows a command: posts argv and the options, prints its output live, and exits 0 when it does', async () => {
    api.json('POST', `${BASE}/exec`, 202, accepted);
    const done = result({}, 'building\ndone\n', 'warning: slow\n');
    api.routes[`GET ${BASE}/exec/${EXEC}/stream`] = {
      status: 200,
      type: 'text/event-stream',
      body: sse([
        ['started', { execId: EXEC, argv: ['npm', 'test'], driver: 'bubblewrap', startedAt: done.startedAt }],
        ['output', { stream: 'stdout', text: 'building\n' }],
        ['output', { stream: 'stderr', text: 'warning: slow\n' }],
        ['output', { stream: 'stdout', text: 'done\n' }],
        ['ended', { result: done }],
      ]),
    };

    const answer = await sut(['sandbox', 'exec', '--follow', '--cwd', 'pkg', '--env', 'CI=1', '--env', 'TZ=UTC', '--timeout-seconds', '30', '--run', 'run-1', '--', 'npm', 'test', '--', '--watch=false']);

    expect(answer).toEqual({ code: ExitCode.ok, stdout: 'building\ndone\n', stderr: `exec ${EXEC} started (packetagent sandbox cancel ${EXEC})\nwarning: slow\n` });
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ argv: ['npm', 'test', '--', '--watch=false'], cwd: 'pkg', env: { CI: '1', TZ: 'UTC' }, limits: { wallTimeMs: 30_000 }, runId: 'run-1' });
    expect(api.seen.map((request, i) => `${request.method} ${request.url} ${api.authorizations[i]}`)).toEqual([`POST ${BASE}/exec Bearer pa_key1_secret`, `GET ${BASE}/exec/${EXEC}/stream Bearer pa_key1_secret`]);
  });

  it('without --follow waits for the end, then prints the whole output checked against its digest, and exits with the exit code', async () => {
    const stdout = 'x'.repeat(100_000);
    api.json('POST', `${BASE}/exec`, 202, accepted);
    api.routes[`GET ${BASE}/exec/${EXEC}/stream`] = { status: 200, type: 'text/event-stream', body: sse([['output', { stream: 'stdout', text: 'x' }], ['ended', { result: result({ exitCode: 3 }, stdout, 'bad\n') }]]) };
    api.routes[`GET ${BASE}/exec/${EXEC}/output?stream=stdout`] = { status: 200, type: 'application/octet-stream', body: stdout };
    api.routes[`GET ${BASE}/exec/${EXEC}/output?stream=stderr`] = { status: 200, type: 'application/octet-stream', body: 'bad\n' };

    const answer = await sut(['sandbox', 'exec', '--', 'node', 'build.js']);

    expect(answer.code).toBe(3);
    expect(answer.stdout).toBe(stdout);
    expect(answer.stderr).toBe('bad\nerror: the command exited with code 3\n');
  });

  it('refuses output that does not match the digest its result states', async () => {
    api.json('POST', `${BASE}/exec`, 202, accepted);
    api.routes[`GET ${BASE}/exec/${EXEC}/stream`] = { status: 200, type: 'text/event-stream', body: sse([['ended', { result: result() }]]) };
    api.routes[`GET ${BASE}/exec/${EXEC}/output?stream=stdout`] = { status: 200, type: 'application/octet-stream', body: 'tampered\n' };
    api.routes[`GET ${BASE}/exec/${EXEC}/output?stream=stderr`] = { status: 200, type: 'application/octet-stream', body: '' };

    const answer = await sut(['sandbox', 'exec', '--', 'node', '--version']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stdout).toBe('');
    expect(answer.stderr).toMatch(/^error: the stdout downloaded hashes to [0-9a-f]{64}, not [0-9a-f]{64} as its result states\n$/);
  });

  it(`exits ${LIMIT_EXIT_CODE} when a limit ended the command, naming the limit on stderr`, async () => {
    api.json('POST', `${BASE}/exec`, 202, accepted);
    const killed = result({ state: 'killed', exitCode: null, signal: 'SIGKILL', limit: 'wall_time', message: 'wall time limit of 1000 ms reached: the process tree was killed' }, '');
    api.routes[`GET ${BASE}/exec/${EXEC}/stream`] = { status: 200, type: 'text/event-stream', body: sse([['ended', { result: killed }]]) };

    const answer = await sut(['sandbox', 'exec', '--follow', '--timeout-seconds', '1', '--', 'sleep', '30']);

    expect(answer.code).toBe(LIMIT_EXIT_CODE);
    expect(answer.stderr).toContain('error: wall_time limit: wall time limit of 1000 ms reached: the process tree was killed\n');
  });

  it('with --json prints the result and still exits with the exit code; a command that never started exits 1', async () => {
    api.json('POST', `${BASE}/exec`, 200, result({ state: 'failed', exitCode: null, message: 'bwrap: setting up uid map: Permission denied' }, ''));

    const answer = await sut(['--json', 'sandbox', 'exec', '--', 'node', '--version']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(JSON.parse(answer.stdout)).toMatchObject({ execId: EXEC, state: 'failed' });
    expect(answer.stderr).toBe('error: the command did not start: bwrap: setting up uid map: Permission denied\n');
  });

  it('prints every issue of a refusal and exits 1; a key without sandbox-exec exits 3', async () => {
    api.json('POST', `${BASE}/exec`, 422, {
      title: 'Unprocessable Content',
      status: 422,
      detail: 'the sandbox refused the command',
      code: 'exec_refused',
      errors: [
        { path: 'cwd', message: 'escapes the workspace' },
        { path: 'env.AWS_SECRET_ACCESS_KEY', message: 'looks like a secret' },
      ],
    });
    const refused = await sut(['sandbox', 'exec', '--cwd', '../..', '--env', 'AWS_SECRET_ACCESS_KEY=x', '--', 'ls']);
    expect(refused.code).toBe(ExitCode.failure);
    expect(refused.stderr).toBe('error: Unprocessable Content: the sandbox refused the command\n  cwd: escapes the workspace\n  env.AWS_SECRET_ACCESS_KEY: looks like a secret\n');

    api.json('POST', `${BASE}/exec`, 403, { title: 'Forbidden', status: 403, detail: 'this needs the "sandbox-exec" permission in the workspace', code: 'permission_denied' });
    expect((await sut(['sandbox', 'exec', '--', 'ls'])).code).toBe(ExitCode.auth);
  });

  it('checks the command line before sending anything', async () => {
    const badEnv = await sut(['sandbox', 'exec', '--env', 'NOEQUALS', '--', 'ls']);
    const badTimeout = await sut(['sandbox', 'exec', '--timeout-seconds', '0', '--', 'ls']);
    const noProgram = await sut(['sandbox', 'exec']);

    expect(badEnv).toMatchObject({ code: ExitCode.failure, stderr: 'error: --env "NOEQUALS" is not NAME=VALUE\n' });
    expect(badTimeout.code).toBe(ExitCode.failure);
    expect(badTimeout.stderr).toContain('positive whole number of seconds');
    expect(noProgram.stderr).toContain("missing required argument 'program'");
    expect(api.seen).toEqual([]);
  });
});

describe('sandbox status, list and cancel', () => {
  let api: CliApi;
  const sut = (argv: string[]) => api.cli(argv);

  beforeAll(async () => {
    api = await new CliApi().start();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
  });

  const limits = { wallTimeMs: 600_000, cpuSeconds: 600, memoryBytes: 1_073_741_824, pids: 256, fileSizeBytes: 1_073_741_824, openFiles: 1024, outputBytes: 134_217_728, tmpBytes: 536_870_912 };

  it(`${sandboxStatus.name} prints the driver in use, each driver found with what it cannot enforce, and the limits`, async () => {
    api.reply = {
      status: 200,
      body: {
        driver: 'bubblewrap',
        drivers: [
          { name: 'bubblewrap', available: true, detail: 'bubblewrap 0.8.0', unenforced: ['memory: no writable cgroup v2 here'] },
          { name: 'docker', available: false, detail: 'no Docker engine at /var/run/docker.sock', unenforced: [] },
        ],
        defaults: limits,
        maximum: { ...limits, wallTimeMs: 3_600_000 },
        envAllowlist: ['CI', 'TZ'],
        egressOrigins: [],
        browser: { available: false, detail: 'no Chromium' },
      },
    };

    const answer = await sut(['sandbox', 'status']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(api.seen).toEqual([{ method: 'GET', url: `${BASE}/status`, body: '' }]);
    expect(answer.stdout).toBe(
      [
        'driver: bubblewrap',
        '  bubblewrap: available, bubblewrap 0.8.0',
        '    not enforced: memory: no writable cgroup v2 here',
        '  docker: unavailable, no Docker engine at /var/run/docker.sock',
        'defaults: wallTimeMs=600000 cpuSeconds=600 memoryBytes=1073741824 pids=256 fileSizeBytes=1073741824 openFiles=1024 outputBytes=134217728 tmpBytes=536870912',
        'maximum:  wallTimeMs=3600000 cpuSeconds=600 memoryBytes=1073741824 pids=256 fileSizeBytes=1073741824 openFiles=1024 outputBytes=134217728 tmpBytes=536870912',
        'environment allowlist: CI, TZ',
        '',
      ].join('\n'),
    );
  });

  it(`${listExecs.name} asks for a run's execs and prints one line each`, async () => {
    const summary = { workspaceId: 'ws_demo', cwd: '.', driver: 'bubblewrap', requestedBy: { kind: 'service', id: 'supervisor' }, endedAt: null };
    api.reply = {
      status: 200,
      body: {
        items: [
          { ...summary, execId: 'run-1:c2', runId: 'run-1', argv: ['sleep', '30'], state: 'killed', exitCode: null, limit: 'cancelled', startedAt: '2026-03-01T12:00:01.000Z' },
          { ...summary, execId: 'run-1:c1', runId: 'run-1', argv: ['node', '--version'], state: 'exited', exitCode: 0, limit: null, startedAt: '2026-03-01T12:00:00.000Z' },
        ],
      },
    };

    const answer = await sut(['sandbox', 'list', '--run', 'run-1', '--limit', '2']);

    expect(api.seen).toEqual([{ method: 'GET', url: `${BASE}/exec?runId=run-1&limit=2`, body: '' }]);
    expect(answer.stdout).toBe('run-1:c2  killed  limit cancelled  2026-03-01T12:00:01.000Z  sleep 30\nrun-1:c1  exited  exit 0  2026-03-01T12:00:00.000Z  node --version\n');
  });

  it(`${cancelExec.name} posts to /cancel and says whether anything was running`, async () => {
    api.reply = { status: 200, body: { found: true } };
    const found = await sut(['sandbox', 'cancel', 'run-1:c2']);
    expect(api.seen).toEqual([{ method: 'POST', url: `${BASE}/exec/run-1%3Ac2/cancel`, body: '{}' }]);
    expect(found.stdout).toBe('cancelled run-1:c2\n');

    api.reply = { status: 200, body: { found: false } };
    const gone = await sut(['sandbox', 'cancel', EXEC]);
    expect(gone).toEqual({ code: ExitCode.ok, stdout: `${EXEC} is not running anywhere: it has ended, or never was\n`, stderr: '' });
  });
});
