import type { NatsConnection } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { ComputerView } from '@packetagent/contracts';
import { requestJson } from '@packetagent/testing';
import { completeSetup, insertUser, OWNER_PASSWORD, signIn, startGatewayTestApp, type GatewayTestApp, type SignedIn } from '../testing/gateway-app.testkit';
import { ComputersController } from './computers.controller';
import { ComputersRoutesModule } from './computers-routes.module';
import { fingerprintOf, PRESENTED, StandInComputerRegistry, UNREACHABLE_HOST } from './testing/stand-in-computer-registry';

// Real: the gateway (access guard, validation, problem+json, OpenAPI) on Postgres, Redis and NATS.
// Standing in: the sandbox service's computer registry, a plain responder on sandbox.computers.*.

interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
  presentedHostKey?: string;
  errors?: Array<{ path: string; message: string }>;
}

const ssh = (fields: Record<string, unknown> = {}) => ({ host: 'build-1.example.com', user: 'deploy', keyCredential: 'build_key', ...fields });
const sshSpec = (fields: Record<string, unknown> = {}, target: Record<string, unknown> = {}) => ({ kind: 'ssh', ssh: ssh(target), roots: ['/srv/app'], ...fields });

describe(ComputersController.name, () => {
  let sut: GatewayTestApp;
  let registry: StandInComputerRegistry;
  let ws: string;
  let owner: string;
  const keys = {} as Record<'viewer' | 'member' | 'admin', { id: string; secret: string }>;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const path = (suffix = '', workspace = ws) => `/api/v1/workspaces/${workspace}/computers${suffix}`;
  const call = <T = Problem>(method: string, suffix: string, options: { key?: string; body?: unknown; workspace?: string; headers?: Record<string, string> } = {}) =>
    sut.request<T>(method, path(suffix, options.workspace), { body: options.body, headers: options.headers ?? bearer(options.key ?? owner) });
  const register = (name: string, spec: Record<string, unknown>, key = owner, workspace = ws) => call<ComputerView & Problem>('PUT', `/${name}`, { key, body: spec, workspace });

  beforeAll(async () => {
    sut = await startGatewayTestApp({ modules: [ComputersRoutesModule.forRoot()] });
    ({ workspaceId: ws, apiKey: owner } = await completeSetup(sut));
    for (const role of ['viewer', 'member', 'admin'] as const) {
      keys[role] = (await sut.request<{ id: string; secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { headers: bearer(owner), body: { name: role, role } })).body;
    }
    registry = new StandInComputerRegistry(sut.app.get<NatsConnection>(NATS_CONNECTION), sut.app.get<Topology>(BUS_TOPOLOGY));
    await registry.start();
  });

  afterAll(async () => {
    await registry?.stop();
    await sut?.close();
  });

  beforeEach(() => {
    registry.requests.length = 0;
  });

  it('refuses an ssh computer whose host key is not pinned with 409, naming the presented fingerprint, and stores nothing', async () => {
    const answer = await register('build-1', sshSpec(), keys.admin.secret);

    expect(answer.status).toBe(409);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body).toMatchObject({ status: 409, title: 'Conflict', code: 'host_key_unpinned', presentedHostKey: PRESENTED, detail: expect.stringContaining(PRESENTED) });
    expect(answer.body.errors).toEqual([{ path: 'acceptHostKey', message: expect.stringContaining(PRESENTED) }]);
    expect((await call('GET', '/build-1')).status).toBe(404);
  });

  it('pins the presented key sent back as acceptHostKey, with the actor of the caller and the conservative policy', async () => {
    const answer = await register('build-2', { ...sshSpec({ description: 'CI builder' }), acceptHostKey: PRESENTED }, keys.admin.secret);

    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      workspaceId: ws,
      name: 'build-2',
      kind: 'ssh',
      description: 'CI builder',
      ssh: { host: 'build-1.example.com', port: 22, user: 'deploy', hostKeys: [PRESENTED], keyCredential: 'build_key' },
      roots: ['/srv/app'],
      policy: { network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit' },
      version: 1,
      createdBy: { kind: 'api_key', id: keys.admin.id },
      status: { state: 'unknown', observedAt: null },
    });
    expect(registry.sent('put')).toEqual([
      expect.objectContaining({
        workspaceId: ws,
        name: 'build-2',
        acceptHostKey: PRESENTED,
        actor: { kind: 'api_key', id: keys.admin.id },
        spec: { kind: 'ssh', description: 'CI builder', ssh: { ...ssh(), port: 22, hostKeys: [] }, roots: ['/srv/app'], policy: {} },
      }),
    ]);
    const read = await call<ComputerView>('GET', '/build-2', { key: keys.viewer.secret });
    expect(read.body).toEqual(answer.body);
    const list = await call<{ items: ComputerView[] }>('GET', '', { key: keys.viewer.secret });
    expect(list.body.items.map((item) => item.name)).toContain('build-2');
  });

  it('registers a local computer, replaces it at the version read, and refuses a stale version with 409', async () => {
    const created = await register('here', { kind: 'local', policy: { network: 'deny' } });
    expect(created.body).toMatchObject({ kind: 'local', ssh: null, roots: [], policy: { network: 'deny', shell: 'ask' }, version: 1 });

    const replaced = await register('here', { kind: 'local', description: 'the sandbox', expectedVersion: 1 });
    expect(replaced.status).toBe(200);
    expect(replaced.body.version).toBe(2);
    const stale = await register('here', { kind: 'local', expectedVersion: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: 'computer_version_conflict' });
  });

  it('answers the registry refusals with their own statuses: changed key 409, unreachable 422, unreadable record 409, unknown 404', async () => {
    const other = fingerprintOf('what the operator checked');
    const changed = await register('moved', { ...sshSpec(), acceptHostKey: other });
    expect(changed.status).toBe(409);
    expect(changed.body).toMatchObject({ code: 'host_key_changed', presentedHostKey: PRESENTED, detail: expect.stringContaining(other) });

    const unreachable = await register('away', sshSpec({}, { host: UNREACHABLE_HOST }));
    expect([unreachable.status, unreachable.body.code]).toEqual([422, 'computer_unreachable']);

    registry.unreadable.add(`${ws}/damaged`);
    for (const [method, suffix, body] of [['GET', '/damaged', undefined], ['PUT', '/damaged', { kind: 'local' }]] as const) {
      const answer = await call(method, suffix, { body });
      expect([method, answer.status, answer.body.code]).toEqual([method, 409, 'computer_record_unreadable']);
      expect(answer.body.detail).toMatch(/leaves it as it is/);
    }

    for (const [method, suffix] of [['GET', '/nowhere'], ['DELETE', '/nowhere'], ['POST', '/nowhere/probe']] as const) {
      const answer = await call(method, suffix);
      expect([method, answer.status, answer.body.code]).toEqual([method, 404, 'computer_not_found']);
    }
  });

  it('probes a computer and answers its status; a host now presenting another key is in that status, flagged changed', async () => {
    await register('probed', { ...sshSpec({}, { host: 'probed.example.com' }), acceptHostKey: PRESENTED });

    const probed = await call<ComputerView>('POST', '/probed/probe');
    expect(probed.status).toBe(200);
    expect(probed.body.status).toMatchObject({ state: 'online', ageMs: 0, observedAt: expect.any(String), hostKey: { state: 'pinned' } });
    expect(registry.sent('probe')).toEqual([{ workspaceId: ws, name: 'probed', actor: { kind: 'api_key', id: expect.any(String) } }]);

    const other = fingerprintOf('a new key');
    registry.presenting.set('probed.example.com', other);
    const refused = await call<ComputerView>('POST', '/probed/probe');
    expect(refused.status).toBe(200);
    expect(refused.body.status).toMatchObject({ state: 'offline', hostKey: { state: 'changed', presented: other } });
  });

  it('removes a computer with 204; it is then not found', async () => {
    await register('gone', { kind: 'local' });

    const removed = await sut.request('DELETE', path('/gone'), { headers: bearer(keys.admin.secret) });

    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    expect(registry.sent('remove')).toEqual([{ workspaceId: ws, name: 'gone', actor: { kind: 'api_key', id: keys.admin.id } }]);
    expect((await call('GET', '/gone')).status).toBe(404);
  });

  it('lets every role read computers and only admin and owner change them: 403 naming computer-manage, and nothing sent', async () => {
    await register('shared', { kind: 'local' });

    for (const role of ['viewer', 'member'] as const) {
      const key = keys[role].secret;
      expect([role, (await call('GET', '', { key })).status, (await call('GET', '/shared', { key })).status]).toEqual([role, 200, 200]);
      for (const [method, suffix, body] of [['PUT', '/shared', { kind: 'local' }], ['DELETE', '/shared', undefined], ['POST', '/shared/probe', undefined]] as const) {
        const answer = await call(method, suffix, { key, body });
        expect([role, method, answer.status, answer.body.code]).toEqual([role, method, 403, 'permission_denied']);
        expect(answer.body.detail).toContain('computer-manage');
      }
    }
    // The registration above is all that reached the registry.
    expect(registry.requests.map((entry) => entry.command)).toEqual(['put']);

    for (const key of [keys.admin.secret, owner]) {
      expect((await call('PUT', '/shared', { key, body: { kind: 'local' } })).status).toBe(200);
      expect((await call('POST', '/shared/probe', { key })).status).toBe(200);
    }
  });

  describe('across workspaces', () => {
    let ownerSession: SignedIn;
    let bob: SignedIn;
    let bobId: string;
    let other: string;
    let otherKey: string;

    beforeAll(async () => {
      ownerSession = await signIn(sut, 'owner@example.com', OWNER_PASSWORD);
      other = (await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Other' }, headers: ownerSession.headers() })).body.id;
      otherKey = (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other}/api-keys`, { headers: ownerSession.headers(), body: { name: 'other-owner', role: 'owner' } })).body.secret;
      bobId = await insertUser(sut, 'bob@example.com', 'bob password 1234');
      // An admin of the first workspace only: every right there, none in the other.
      await sut.db.pool.query(`INSERT INTO identity.memberships (user_id, workspace_id, role) VALUES ($1, $2, 'admin')`, [bobId, ws]);
      bob = await signIn(sut, 'bob@example.com', 'bob password 1234');
      expect((await register('theirs', { kind: 'local', description: 'of the other workspace' }, otherKey, other)).status).toBe(200);
      registry.requests.length = 0;
    });

    it("answers 404 to a member of one workspace for any of another's computers, and sends the registry nothing", async () => {
      for (const [method, suffix, body] of [['GET', '', undefined], ['GET', '/theirs', undefined], ['PUT', '/theirs', { kind: 'local' }], ['DELETE', '/theirs', undefined], ['POST', '/theirs/probe', undefined]] as const) {
        const asBob = await call(method, suffix, { workspace: other, body, headers: bob.headers() });
        expect([method, suffix, asBob.status]).toEqual([method, suffix, 404]);
        const asKey = await call(method, suffix, { workspace: other, body, key: keys.admin.secret });
        expect([method, suffix, asKey.status]).toEqual([method, suffix, 404]);
      }
      expect(registry.requests).toEqual([]);
    });

    it("keeps each workspace's computers to itself: the same name in two workspaces is two computers", async () => {
      expect((await call('GET', '/theirs', { headers: bob.headers() })).status).toBe(404);
      const mine = await call<ComputerView>('PUT', '/theirs', { headers: bob.headers(), body: { kind: 'local', description: 'mine' } });
      expect(mine.status).toBe(200);
      expect(mine.body).toMatchObject({ workspaceId: ws, description: 'mine', createdBy: { kind: 'user', id: bobId } });

      const theirs = await call<ComputerView>('GET', '/theirs', { workspace: other, key: otherKey });
      expect(theirs.body).toMatchObject({ workspaceId: other, description: 'of the other workspace' });
      const listed = await call<{ items: ComputerView[] }>('GET', '', { workspace: other, key: otherKey });
      expect(listed.body.items.every((item) => item.workspaceId === other)).toBe(true);
    });
  });

  describe('bad input', () => {
    const raw = (method: string, suffix: string, text: string | Buffer, type = 'application/json') =>
      requestJson<Problem>(sut.baseUrl, method, path(suffix), { raw: text, headers: { ...bearer(owner), 'content-type': type } });

    it.each([
      ['a NUL in the description', { kind: 'local', description: 'a\u0000b' }, 'description', /NUL/],
      ['a lone surrogate in the description', { kind: 'local', description: 'a\ud800b' }, 'description', /surrogate/],
      ['a lone surrogate in a root', sshSpec({ roots: ['/srv/\udc00'] }), 'roots.0', /surrogate/],
      ['a NUL in a root', sshSpec({ roots: ['/srv/a\u0000'] }), 'roots.0', /absolute directory/],
      ['a relative root', sshSpec({ roots: ['srv/app'] }), 'roots.0', /absolute directory/],
      ['a root with ..', sshSpec({ roots: ['/srv/../etc'] }), 'roots.0', /absolute directory/],
      ['an ssh computer without roots', sshSpec({ roots: [] }), 'roots', /at least one root/],
      ['an ssh computer without its target', { kind: 'ssh', roots: ['/srv'] }, 'ssh', /host, user and key credential/],
      ['a local computer with roots', { kind: 'local', roots: ['/srv'] }, 'roots', /takes no roots/],
      ['an unknown kind', { kind: 'winrm' }, 'kind', /./],
      ['a field the spec does not have', { kind: 'local', owner: 'me' }, '', /owner/],
      ['an actor of its own', { kind: 'local', actor: { kind: 'system', id: 'root' } }, '', /actor/],
      ['a policy typo', { kind: 'local', policy: { netwrok: 'allow' } }, 'policy', /netwrok/],
      ['a policy level that does not exist', { kind: 'local', policy: { network: 'always' } }, 'policy.network', /./],
      ['a malformed fingerprint to accept', { ...sshSpec(), acceptHostKey: 'MD5:aa:bb' }, 'acceptHostKey', /SHA256/],
      ['a malformed pinned key', sshSpec({}, { hostKeys: ['SHA256:short'] }), 'ssh.hostKeys.0', /SHA256/],
      ['a port out of range', sshSpec({}, { port: 70_000 }), 'ssh.port', /./],
      ['a port as text', sshSpec({}, { port: '22' }), 'ssh.port', /./],
      ['a host with a space', sshSpec({}, { host: 'a b' }), 'ssh.host', /host name/],
      ['a user with a NUL', sshSpec({}, { user: 'de\u0000ploy' }), 'ssh.user', /user name/],
      ['a key credential that is not a credential name', sshSpec({}, { keyCredential: '../id_rsa' }), 'ssh.keyCredential', /./],
      ['expectedVersion 0', { kind: 'local', expectedVersion: 0 }, 'expectedVersion', /./],
      ['a description over 500 characters', { kind: 'local', description: 'x'.repeat(501) }, 'description', /./],
      ['an array body', [{ kind: 'local' }], '', /./],
      ['a null body', null, '', /./],
    ])('answers 400 for %s, naming the field, and sends nothing', async (what, body, field, message) => {
      const answer = await raw('PUT', '/bad', JSON.stringify(body));

      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      // A NUL or an unpaired surrogate is refused at the HTTP boundary, before the route's own validation.
      if (/NUL|surrogate/.test(what)) {
        expect(answer.body.code).toBe('invalid_characters');
        expect(answer.body.errors).toContainEqual({ path: field, message: expect.any(String) });
      } else {
        expect(answer.body.code).toBe('validation_failed');
        expect(answer.body.errors).toContainEqual({ path: field, message: expect.stringMatching(message) });
      }
      expect(registry.requests).toEqual([]);
    });

    it('answers every malformed, deep, huge or mistyped body with a 4xx problem, never a 5xx', async () => {
      const deep = `{"kind":"local","policy":${'['.repeat(400_000)}${']'.repeat(400_000)}}`;
      const deepObject = `{"kind":"local","description":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
      const answers = [
        await raw('PUT', '/bad', '{"kind": "local"'),
        await raw('PUT', '/bad', ''),
        await raw('PUT', '/bad', deep),
        await raw('PUT', '/bad', deepObject),
        await raw('PUT', '/bad', Buffer.from([0x7b, 0x22, 0x6b, 0x69, 0x6e, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
        await raw('PUT', '/bad', '{"kind":"local"}', 'text/plain'),
        await raw('PUT', '/bad', '<kind>local</kind>', 'application/xml'),
        await raw('PUT', '/bad', JSON.stringify({ kind: 'local', description: 'x'.repeat(2_000_000) })),
        await raw('PUT', '/bad', `{"kind":"local","__proto__":{"polluted":true}}`),
        await raw('PUT', '/bad', `{"kind":"local","constructor":{"prototype":{"polluted":true}}}`),
        await raw('POST', '/bad/probe', '{"not": "closed"'),
      ];
      for (const answer of answers) {
        expect([answer.status >= 400 && answer.status < 500, answer.status, answer.headers.get('content-type')]).toEqual([true, answer.status, expect.stringContaining('application/problem+json')]);
      }
      expect(answers[7]!.status).toBe(413);
      expect(answers[6]!.status).toBe(415);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(registry.requests).toEqual([]);
    });

    it.each(['Build', '1st', 'a_b', 'a.b', `a${'b'.repeat(63)}`, 'a%00b', 'a%20b', '%C3%A9t%C3%A9', '%E2%80%AE', '..%2F..%2Fetc', '-'])('answers 400 for the name %s on every route, and sends nothing', async (name) => {
      for (const [method, suffix, body] of [['GET', `/${name}`, undefined], ['PUT', `/${name}`, { kind: 'local' }], ['DELETE', `/${name}`, undefined], ['POST', `/${name}/probe`, undefined]] as const) {
        const answer = await call(method, suffix, { body });
        expect([name, method, answer.status]).toEqual([name, method, 400]);
        expect(answer.headers.get('content-type')).toContain('application/problem+json');
      }
      expect(registry.requests).toEqual([]);
    });

    it('answers a name longer than any route takes, or one that is not UTF-8 (the router refuses it before any route), with a 4xx', async () => {
      for (const name of ['a'.repeat(5_000), '%ED%A0%80', '%FF', '%']) {
        const answer = await call('GET', `/${name}`);
        expect([name.slice(0, 10), answer.status >= 400 && answer.status < 500]).toEqual([name.slice(0, 10), true]);
      }
      expect(registry.requests).toEqual([]);
    });
  });

  it('documents every computer route with its permission, body, answers and the presented host key', async () => {
    type Operation = { 'x-required-permission'?: string; requestBody?: unknown; responses: Record<string, unknown>; parameters?: Array<{ name: string; in: string }> };
    const document = (await sut.request<{ paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } }>('GET', '/api/v1/openapi.json')).body;
    const route = (suffix: string, method: string) => document.paths[`/api/v1/workspaces/{ws}/computers${suffix}`]?.[method];

    expect(route('', 'get')?.['x-required-permission']).toBe('inspect');
    expect(route('/{name}', 'get')?.['x-required-permission']).toBe('inspect');
    for (const [suffix, method] of [['/{name}', 'put'], ['/{name}', 'delete'], ['/{name}/probe', 'post']] as const) {
      expect([suffix, method, route(suffix, method)?.['x-required-permission']]).toEqual([suffix, method, 'computer-manage']);
      expect(route(suffix, method)?.parameters?.map((parameter) => parameter.name)).toEqual(expect.arrayContaining(['ws', 'name']));
    }
    expect(JSON.stringify(route('/{name}', 'put')?.requestBody)).toContain('PutComputerBodyDto');
    expect(document.components.schemas['PutComputerBodyDto']?.properties).toEqual(expect.objectContaining({ kind: expect.anything(), ssh: expect.anything(), acceptHostKey: expect.anything(), expectedVersion: expect.anything() }));
    expect(Object.keys(route('/{name}', 'put')?.responses ?? {})).toEqual(expect.arrayContaining(['200', '409', '422', 'default']));
    expect(Object.keys(route('/{name}', 'delete')?.responses ?? {})).toEqual(expect.arrayContaining(['204', '404']));
    expect(JSON.stringify(route('/{name}', 'get')?.responses['200'])).toContain('ComputerViewDto');
    expect(document.components.schemas['ComputerViewDto_Output']?.properties).toEqual(expect.objectContaining({ status: expect.anything(), version: expect.anything() }));
    expect(document.components.schemas['Problem']?.properties).toHaveProperty('presentedHostKey');
  });
});
