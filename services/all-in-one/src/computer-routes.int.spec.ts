import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ComputersRoutesModule } from '@packetagent/gateway';
import type { ComputerView } from '@packetagent/contracts';
import { SshdProcess, sshdAvailable } from '@packetagent/testing';
import { bearer, startTestApp, type TestApp } from './testing/app.testkit';

// Real: the whole all-in-one app (gateway, the sandbox service's computer registry, the vault) on
// Postgres, NATS and Redis, an OpenSSH server of the test's own on a loopback port, and the
// packetagent CLI as a process. The gateway reaches the registry only over NATS.

const describeWithSshd = sshdAvailable() ? describe : describe.skip;
const ROOT = resolve(__dirname, '../../..');
const BIN = join(ROOT, 'tools/cli/bin/packetagent.js');
const PASSWORD = 'correct horse battery staple';

interface Problem {
  status: number;
  code: string;
  detail: string;
  presentedHostKey?: string;
  errors?: Array<{ path: string; message: string }>;
}

describeWithSshd(ComputersRoutesModule.name, () => {
  jest.setTimeout(60_000);
  let sut: TestApp;
  let sshd: SshdProcess;
  let root: string;
  let ws: string;
  let owner: string;
  let viewer: string;
  let outsider: { ws: string; key: string };

  const path = (suffix = '', workspace = ws) => `/api/v1/workspaces/${workspace}/computers${suffix}`;
  const call = <T = Problem>(method: string, suffix: string, body?: unknown, key = owner, workspace = ws) => sut.request<T>(method, path(suffix, workspace), { body, headers: bearer(key) });
  const spec = (fields: Record<string, unknown> = {}) => ({
    kind: 'ssh',
    ssh: { host: '127.0.0.1', port: sshd.port, user: sshd.user, keyCredential: 'build_key' },
    roots: [root],
    ...fields,
  });
  const cli = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((done) => {
      const env = { ...process.env, PACKETAGENT_API_URL: sut.baseUrl, PACKETAGENT_API_KEY: owner, PACKETAGENT_WORKSPACE: ws };
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('exit', (code) => done({ code, stdout, stderr }));
    });

  beforeAll(async () => {
    sshd = await SshdProcess.create();
    await sshd.start();
    root = await mkdtemp(join(tmpdir(), 'pa-computer-root-'));
    sut = await startTestApp();
    const setup = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', { body: { token: sut.setupToken, email: 'ops@example.com', password: PASSWORD, workspace: 'Ops' } });
    ({ workspaceId: ws, apiKey: owner } = setup.body);
    viewer = (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { body: { name: 'viewer', role: 'viewer' }, headers: bearer(owner) })).body.secret;
    expect((await sut.request('PUT', `/api/v1/workspaces/${ws}/credentials/build_key`, { body: { value: await sshd.privateKey() }, headers: bearer(owner) })).status).toBe(200);
    const login = await sut.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', { body: { email: 'ops@example.com', password: PASSWORD } });
    const cookie = /pa_session=([^;]*)/.exec(login.headers.getSetCookie().join('\n'))![1]!;
    const session = { cookie: `pa_session=${cookie}`, 'x-csrf-token': login.body.csrfToken };
    const other = await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' }, headers: session });
    const key = await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other.body.id}/api-keys`, { body: { name: 'other', role: 'owner' }, headers: session });
    outsider = { ws: other.body.id, key: key.body.secret };
  });
  afterAll(async () => {
    await sut?.close();
    await sshd?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses an unpinned host with 409 naming the key it presented, registers nothing, and pins the key once it is sent back', async () => {
    const presented = sshd.hostFingerprint();

    const refused = await call('PUT', '/build-box', spec());
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ code: 'host_key_unpinned', presentedHostKey: presented, detail: expect.stringContaining(presented) });
    expect(refused.body.errors).toEqual([{ path: 'acceptHostKey', message: expect.stringContaining(presented) }]);
    expect((await call('GET', '/build-box')).body.code).toBe('computer_not_found');

    const wrong = await call('PUT', '/build-box', { ...spec(), acceptHostKey: `SHA256:${'A'.repeat(43)}` });
    expect([wrong.status, wrong.body.code, wrong.body.presentedHostKey]).toEqual([409, 'host_key_changed', presented]);

    const pinned = await call<ComputerView>('PUT', '/build-box', { ...spec({ description: 'build box' }), acceptHostKey: presented });
    expect(pinned.status).toBe(200);
    expect(pinned.body).toMatchObject({ workspaceId: ws, name: 'build-box', ssh: { hostKeys: [presented] }, policy: { network: 'ask', secrets: 'deny', approval: 'explicit' }, version: 1, createdBy: { kind: 'api_key' } });

    const probed = await call<ComputerView>('POST', '/build-box/probe');
    expect(probed.status).toBe(200);
    expect(probed.body.status).toMatchObject({ state: 'online', observedAt: expect.any(String), hostKey: { state: 'pinned' } });
    expect(probed.body.capabilities).toMatchObject({ os: 'Linux' });

    const listed = await call<{ items: ComputerView[] }>('GET', '', undefined, viewer);
    expect(listed.body.items.map((item) => [item.name, item.status.state])).toEqual([['build-box', 'online']]);
    // A PUT replaces the whole spec: the pinned key goes with it.
    const stale = await call('PUT', '/build-box', { ...spec(), ssh: { ...spec().ssh, hostKeys: [presented] }, expectedVersion: 7 });
    expect([stale.status, stale.body.code]).toEqual([409, 'computer_version_conflict']);
  });

  it('lets a viewer read and nothing more, and answers 404 to another workspace for any of it', async () => {
    for (const [method, suffix, body] of [['PUT', '/build-box', spec()], ['DELETE', '/build-box', undefined], ['POST', '/build-box/probe', undefined]] as const) {
      expect([method, (await call(method, suffix, body, viewer)).status]).toEqual([method, 403]);
      expect([method, (await call(method, suffix, body, outsider.key)).status]).toEqual([method, 404]);
    }
    expect((await call<{ items: ComputerView[] }>('GET', '', undefined, outsider.key, outsider.ws)).body.items).toEqual([]);
    expect((await call('GET', '/build-box', undefined, outsider.key, outsider.ws)).body.code).toBe('computer_not_found');
    expect((await call('GET', '/build-box', undefined, outsider.key)).status).toBe(404);
    expect((await call('GET', '/build-box', undefined, viewer)).status).toBe(200);
  });

  it('runs packetagent computer register, list, status and remove against it', async () => {
    const presented = sshd.hostFingerprint();
    const flags = ['--host', '127.0.0.1', '--port', String(sshd.port), '--user', sshd.user, '--key-credential', 'build_key', '--root', root];

    const refused = await cli(['computer', 'register', 'from-cli', ...flags]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`presented: ${presented}`);
    expect(refused.stderr).toContain(`--accept-host-key ${presented}`);

    const registered = await cli(['computer', 'register', 'from-cli', ...flags, '--accept-host-key', presented]);
    expect([registered.code, registered.stderr]).toEqual([0, '']);
    expect(registered.stdout).toContain(`pinned host keys: ${presented}`);
    const probed = await cli(['computer', 'probe', 'from-cli']);
    expect(probed.stdout).toMatch(/^status: online, observed \d+ s ago$/m);
    const listed = await cli(['computer', 'list']);
    expect(listed.stdout).toMatch(/^from-cli {2}ssh {2}\S+@127\.0\.0\.1:\d+ {2}online, observed \d+ s ago$/m);

    expect((await cli(['computer', 'remove', 'from-cli'])).stderr).toContain('needs --yes');
    expect((await cli(['computer', 'remove', 'from-cli', '--yes'])).stdout).toBe('removed computer from-cli\n');
    expect((await cli(['computer', 'status', 'from-cli'])).code).toBe(1);
  });
});
