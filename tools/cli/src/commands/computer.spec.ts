import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { computerStatus, listComputers, probeComputer, registerComputer, removeComputer } from './computer';

// Answers shaped as the gateway's computer routes document them (ComputerViewSchema in libs/contracts):
// these tests cover the requests the commands build, what they print and their exit codes.

const BASE = '/api/v1/workspaces/ws_demo/computers';
const PRESENTED = `SHA256:${'P'.repeat(43)}`;
const PINNED = `SHA256:${'Q'.repeat(43)}`;

function computer(fields: Record<string, unknown> = {}, status: Record<string, unknown> = {}) {
  return {
    workspaceId: 'ws_demo',
    name: 'build-1',
    kind: 'ssh',
    description: 'CI builder',
    ssh: { host: 'build-1.example.com', port: 22, user: 'deploy', hostKeys: [PRESENTED], keyCredential: 'build_key' },
    roots: ['/srv/app', '/srv/cache'],
    policy: { network: 'ask', write: 'allow', shell: 'ask', secrets: 'deny', approval: 'explicit' },
    capabilities: { os: 'linux', arch: 'x86_64', cpus: 8, tools: ['git', 'node'] },
    version: 3,
    createdBy: { kind: 'api_key', id: 'key1' },
    createdAt: '2026-03-01T11:00:00.000Z',
    updatedAt: '2026-03-01T11:30:00.000Z',
    status: { state: 'online', observedAt: '2026-03-01T11:59:56.000Z', ageMs: 4_000, staleAfterMs: 45_000, detail: 'Linux 6.8 x86_64', hostKey: { state: 'pinned', presented: null, at: null }, ...status },
    ...fields,
  };
}

const unpinned = {
  type: 'urn:packetagent:problem:host_key_unpinned',
  title: 'Conflict',
  status: 409,
  code: 'host_key_unpinned',
  detail: `build-1.example.com presented a host key that is not pinned: acceptHostKey: the host presented ${PRESENTED}`,
  presentedHostKey: PRESENTED,
  errors: [{ path: 'acceptHostKey', message: `the host presented ${PRESENTED}: verify it and send it back as acceptHostKey` }],
};

const REGISTER = ['computer', 'register', 'build-1', '--host', 'build-1.example.com', '--user', 'deploy', '--key-credential', 'build_key', '--root', '/srv/app', '--root', '/srv/cache'];

describe(registerComputer.name, () => {
  let api: CliApi;

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = {};
  });

  it('refused for an unpinned host key, prints the presented fingerprint, how to verify it and the flag to re-run with, and exits 1', async () => {
    api.json('PUT', `${BASE}/build-1`, 409, unpinned);

    const answer = await api.cli([...REGISTER, '--port', '2222']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stdout).toBe('');
    expect(answer.stderr).toContain(`presented: ${PRESENTED}`);
    expect(answer.stderr).toContain('ssh-keygen -lf');
    expect(answer.stderr).toContain('ssh-keyscan -p 2222 build-1.example.com | ssh-keygen -lf -');
    expect(answer.stderr).toContain(`run the same command again with --accept-host-key ${PRESENTED}`);
    expect(answer.stderr).toContain('nothing was registered');
  });

  it('reads the fingerprint from the issue when the problem has no presentedHostKey', async () => {
    const { presentedHostKey: _, ...bare } = unpinned;
    api.json('PUT', `${BASE}/build-1`, 409, bare);

    const answer = await api.cli(REGISTER);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stderr).toContain(`--accept-host-key ${PRESENTED}`);
  });

  it('sends the spec with the accepted key and only the policy axes given, and prints what was registered', async () => {
    api.json('PUT', `${BASE}/build-1`, 200, computer({}, { state: 'unknown', observedAt: null, ageMs: null }));

    const answer = await api.cli([...REGISTER, '--port', '2222', '--accept-host-key', PRESENTED, '--host-key', PINNED, '--write', 'allow', '--approval', 'trust-computer', '--description', 'CI builder']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({
      kind: 'ssh',
      description: 'CI builder',
      policy: { write: 'allow', approval: 'trust-computer' },
      ssh: { host: 'build-1.example.com', port: 2222, user: 'deploy', keyCredential: 'build_key', hostKeys: [PINNED] },
      roots: ['/srv/app', '/srv/cache'],
      acceptHostKey: PRESENTED,
    });
    expect(answer.stdout).toContain('registered build-1 (deploy@build-1.example.com:22) version 3\n');
    expect(answer.stdout).toContain('status: unknown: never observed\n');
  });

  it('registers the local sandbox with --local, and refuses ssh flags with it or a missing one without it', async () => {
    api.json('PUT', `${BASE}/here`, 200, computer({ name: 'here', kind: 'local', ssh: null, roots: [] }, { hostKey: { state: 'not_applicable', presented: null, at: null } }));

    const local = await api.cli(['computer', 'register', 'here', '--local', '--network', 'deny']);
    expect(local.code).toBe(ExitCode.ok);
    expect(JSON.parse(api.seen[0]!.body)).toEqual({ kind: 'local', policy: { network: 'deny' } });

    const mixed = await api.cli(['computer', 'register', 'here', '--local', '--root', '/srv']);
    expect([mixed.code, mixed.stderr]).toEqual([ExitCode.failure, expect.stringContaining('takes no --root')]);
    const missing = await api.cli(['computer', 'register', 'build-1', '--host', 'h']);
    expect([missing.code, missing.stderr]).toEqual([ExitCode.failure, expect.stringContaining('needs --user, --key-credential, --root')]);
    const typo = await api.cli([...REGISTER, '--network', 'sometimes']);
    expect(typo.code).toBe(ExitCode.failure);
    expect(typo.stderr).toContain("'sometimes' is invalid");
    expect(api.seen).toHaveLength(1);
  });

  it('says loudly when the host presents another key than the one confirmed', async () => {
    api.json('PUT', `${BASE}/build-1`, 409, {
      title: 'Conflict',
      status: 409,
      code: 'host_key_changed',
      detail: `build-1.example.com:22 now presents ${PRESENTED}, not the ${PINNED} you confirmed: nothing was registered`,
      presentedHostKey: PRESENTED,
    });

    const answer = await api.cli([...REGISTER, '--accept-host-key', PINNED]);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stderr).toContain(`HOST KEY CHANGED: build-1.example.com presents ${PRESENTED}, not the key you confirmed; nothing was registered.`);
    expect(answer.stderr).toContain(`Only if it is the host's own key, run the command again with --accept-host-key ${PRESENTED}`);
  });

  it('passes any other refusal on with its issues', async () => {
    api.json('PUT', `${BASE}/build-1`, 400, { title: 'Bad Request', status: 400, code: 'validation_failed', detail: 'the request is not valid', errors: [{ path: 'roots.0', message: 'an absolute directory' }] });

    const answer = await api.cli(REGISTER);

    expect(answer).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: Bad Request: the request is not valid\n  roots.0: an absolute directory\n' });
  });
});

describe(`${listComputers.name}, ${computerStatus.name} and ${probeComputer.name}`, () => {
  let api: CliApi;

  beforeAll(async () => {
    api = await new CliApi().start();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = {};
  });

  it('lists each computer with its state and when it was last observed, flagging a changed host key', async () => {
    api.json('GET', BASE, 200, {
      items: [
        computer(),
        computer({ name: 'old', ssh: { host: 'old.example.com', port: 2222, user: 'ops', hostKeys: [PINNED], keyCredential: 'old_key' } }, { state: 'unknown', ageMs: 180_000, hostKey: { state: 'changed', presented: PRESENTED, at: '2026-03-01T11:57:00.000Z' } }),
        computer({ name: 'here', kind: 'local', ssh: null, roots: [] }, { state: 'unknown', observedAt: null, ageMs: null }),
      ],
    });

    const answer = await api.cli(['computer', 'list']);

    expect(answer).toEqual({
      code: ExitCode.ok,
      stderr: '',
      stdout: [
        'build-1  ssh  deploy@build-1.example.com:22  online, observed 4 s ago',
        'old  ssh  ops@old.example.com:2222  unknown: last observed 3 min ago (stale after 45 s)  !! HOST KEY CHANGED',
        'here  local  local  unknown: never observed',
        '',
      ].join('\n'),
    });
  });

  it('says so when there are none', async () => {
    api.json('GET', BASE, 200, { items: [] });
    expect((await api.cli(['computer', 'list'])).stdout).toBe('no computers\n');
  });

  it('shows one computer with the changed host key first, then state, target, keys, roots, policy and capabilities', async () => {
    api.json('GET', `${BASE}/build-1`, 200, computer({}, { state: 'offline', detail: 'host key changed', ageMs: 61_000, hostKey: { state: 'changed', presented: PINNED, at: '2026-03-01T11:59:00.000Z' } }));

    const answer = await api.cli(['computer', 'status', 'build-1']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stdout.split('\n')).toEqual([
      'computer build-1 (ssh) version 3: CI builder',
      `!! HOST KEY CHANGED: the computer presented ${PINNED} at 2026-03-01T11:59:00.000Z, which is not pinned; commands on it are refused until the record is updated`,
      'status: offline: host key changed, observed 1 min ago',
      'last probe: host key changed',
      'target: deploy@build-1.example.com:22, key credential build_key',
      `pinned host keys: ${PRESENTED}`,
      'roots: /srv/app, /srv/cache',
      'policy: network ask, write allow, shell ask, secrets deny, approval explicit',
      'capabilities: linux x86_64, 8 cpus, tools: git node',
      '',
    ]);
  });

  it('prints the machine-readable computer with --json', async () => {
    api.json('GET', `${BASE}/build-1`, 200, computer());

    const answer = await api.cli(['--json', 'computer', 'status', 'build-1']);

    expect(JSON.parse(answer.stdout)).toMatchObject({ name: 'build-1', status: { state: 'online', ageMs: 4_000 } });
  });

  it('probes now and prints the status that follows; a computer that is not there exits 1 with the answer', async () => {
    api.json('POST', `${BASE}/build-1/probe`, 200, computer({}, { ageMs: 0 }));
    api.json('GET', `${BASE}/nope`, 404, { title: 'Not Found', status: 404, code: 'computer_not_found', detail: 'computer nope not found' });

    const probed = await api.cli(['computer', 'probe', 'build-1']);
    const missing = await api.cli(['computer', 'status', 'nope']);

    expect(probed).toEqual({ code: ExitCode.ok, stderr: '', stdout: 'probed build-1 (deploy@build-1.example.com:22)\nstatus: online, observed 0 s ago\nlast probe: Linux 6.8 x86_64\n' });
    expect(api.seen[0]).toMatchObject({ method: 'POST', url: `${BASE}/build-1/probe` });
    expect(missing).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: Not Found: computer nope not found\n' });
  });
});

describe(removeComputer.name, () => {
  let api: CliApi;

  beforeAll(async () => {
    api = await new CliApi().start();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = { [`DELETE ${BASE}/build-1`]: { status: 204, body: '' } };
  });

  it('removes with --yes without asking', async () => {
    const asked: string[] = [];

    const answer = await api.cli(['computer', 'remove', 'build-1', '--yes'], { confirm: async (question) => (asked.push(question), false) });

    expect(answer).toEqual({ code: ExitCode.ok, stdout: 'removed computer build-1\n', stderr: '' });
    expect(asked).toEqual([]);
    expect(api.seen.map((request) => `${request.method} ${request.url}`)).toEqual([`DELETE ${BASE}/build-1`]);
  });

  it('refuses without --yes when there is no terminal to ask on, and sends nothing', async () => {
    const answer = await api.cli(['computer', 'remove', 'build-1']);

    expect(answer).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: removing computer build-1 needs --yes when standard input is not a terminal\n' });
    expect(api.seen).toEqual([]);
  });

  it('asks on a terminal: removes on yes, keeps it on anything else', async () => {
    const asked: string[] = [];

    const declined = await api.cli(['computer', 'remove', 'build-1'], { confirm: async (question) => (asked.push(question), false) });
    expect(declined).toEqual({ code: ExitCode.failure, stdout: '', stderr: 'error: computer build-1 was not removed\n' });
    expect(api.seen).toEqual([]);

    const accepted = await api.cli(['computer', 'remove', 'build-1'], { confirm: async () => true });
    expect(accepted.code).toBe(ExitCode.ok);
    expect(asked).toEqual(['Remove computer build-1? Commands can no longer run on it. [y/N] ']);
    expect(api.seen).toHaveLength(1);
  });
});
