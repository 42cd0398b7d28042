import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import { BUS_TOPOLOGY, CommandBus, type Topology } from '@packetagent/bus';
import { DomainError, OAuthCommands, OAuthErrorCodes, type OAuthConnection } from '@packetagent/contracts';
import { requestJson, testEnv } from '@packetagent/testing';
import { completeSetup, insertUser, OWNER_PASSWORD, signIn, startGatewayTestApp, type GatewayTestApp, type SignedIn } from '../testing/gateway-app.testkit';
import { McpConnectionsController } from './mcp-connections.controller';

// Real: the gateway (access guard, validation, problem+json, OpenAPI) on Postgres, Redis and NATS.
// Standing in: a responder on the three vault.oauth.* subjects, written here, that keeps flows
// and connections in memory the way OAuthCommands describes them; it is not the vault.

type BeginRequest = z.output<typeof OAuthCommands.begin.request>;
type CompleteRequest = z.output<typeof OAuthCommands.complete.request>;

interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

class Refused extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    override readonly retryable = false,
  ) {
    super(message);
  }
}

/** The code this responder's token endpoint refuses, quoting it back as a careless server might. */
const REFUSED_CODE = 'code-the-token-endpoint-refuses';

class StandInOAuthResponder {
  readonly begins: BeginRequest[] = [];
  readonly completes: CompleteRequest[] = [];
  /** resource → the refusal beginning a flow for it meets. */
  readonly refusals = new Map<string, Refused>();
  private readonly flows = new Map<string, BeginRequest>();
  private readonly connections = new Map<string, OAuthConnection[]>();
  private nc: NatsConnection | null = null;
  private bus: CommandBus | null = null;

  constructor(private readonly topo: Topology) {}

  async start(): Promise<void> {
    this.nc = await connect({ servers: testEnv.natsUrl.split(','), name: 'mcp-connections-spec-responder' });
    const bus = new CommandBus(this.nc, this.topo);
    bus.handle(OAuthCommands.begin, async (request) => {
      this.begins.push(request);
      const refusal = this.refusals.get(request.resource);
      if (refusal) throw refusal;
      const state = randomBytes(16).toString('base64url');
      this.flows.set(state, request);
      const clientId = request.oauth.clientId ?? `dyn-${state.slice(0, 6)}`;
      const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: request.redirectUri, state, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
      return { authorizationUrl: `https://auth.example.com/authorize?${query}`, expiresAt: new Date(Date.now() + 600_000).toISOString(), issuer: 'https://auth.example.com', clientId, registered: !request.oauth.clientId };
    });
    bus.handle(OAuthCommands.complete, async (request) => {
      this.completes.push(request);
      const flow = this.flows.get(request.state);
      if (!flow) throw new Refused(OAuthErrorCodes.flowUnknown, 'the state is unknown, used or past its ten minutes: begin the connection again');
      this.flows.delete(request.state);
      if (request.error) throw new Refused(OAuthErrorCodes.authorizationDenied, `the authorization server answered ${request.error}${request.errorDescription ? `: ${request.errorDescription}` : ''}`);
      if (request.code === REFUSED_CODE) throw new Refused(OAuthErrorCodes.exchangeFailed, `the token endpoint answered invalid_grant for code ${request.code} (state ${request.state})`);
      const now = new Date().toISOString();
      const previous = (this.connections.get(flow.workspaceId) ?? []).filter((item) => item.credential !== flow.oauth.credential);
      const connection: OAuthConnection = {
        credential: flow.oauth.credential,
        version: 1 + (this.connections.get(flow.workspaceId)?.find((item) => item.credential === flow.oauth.credential)?.version ?? 0),
        resource: flow.resource,
        issuer: 'https://auth.example.com',
        clientId: flow.oauth.clientId ?? 'dyn-client',
        scope: flow.oauth.scopes.join(' ') || null,
        state: 'connected',
        reason: null,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        refreshable: true,
        connectedAt: now,
        connectedBy: flow.actor,
        refreshedAt: null,
      };
      this.connections.set(flow.workspaceId, [...previous, connection]);
      return { workspaceId: flow.workspaceId, connection, returnTo: flow.returnTo ?? null };
    });
    bus.handle(OAuthCommands.connections, async (request) => ({ items: this.connections.get(request.workspaceId) ?? [] }));
    this.bus = bus;
    await this.nc.flush();
  }

  async stop(): Promise<void> {
    await this.bus?.drain();
    await this.nc?.close();
    this.bus = null;
    this.nc = null;
  }

  /** The state of the flow begun last, as the authorization server would bring it back. */
  stateOf(answer: { authorizationUrl: string }): string {
    return new URL(answer.authorizationUrl).searchParams.get('state')!;
  }
}

const SERVER = 'https://mcp.example.com/mcp';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe(McpConnectionsController.name, () => {
  let sut: GatewayTestApp;
  let responder: StandInOAuthResponder;
  let ws: string;
  let owner: string;
  const keys = {} as Record<'viewer' | 'member' | 'admin', { id: string; secret: string }>;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const connectionsPath = (workspace = ws) => `/api/v1/workspaces/${workspace}/mcp/connections`;
  const begin = <T = Problem>(body: unknown, options: { key?: string; workspace?: string; headers?: Record<string, string> } = {}) =>
    sut.request<T>('POST', connectionsPath(options.workspace), { body, headers: options.headers ?? bearer(options.key ?? keys.admin.secret) });
  type Begun = { authorizationUrl: string; expiresAt: string; credential: string; issuer: string; clientId: string; registered: boolean };
  /** The callback as the operator's browser opens it: no session, no key, whatever Accept says. */
  const callback = (query: Record<string, string> | string, accept = BROWSER_ACCEPT) =>
    fetch(`${sut.baseUrl}/api/v1/mcp/oauth/callback?${typeof query === 'string' ? query : new URLSearchParams(query)}`, { redirect: 'manual', headers: { accept } });

  beforeAll(async () => {
    sut = await startGatewayTestApp();
    ({ workspaceId: ws, apiKey: owner } = await completeSetup(sut));
    for (const role of ['viewer', 'member', 'admin'] as const) {
      keys[role] = (await sut.request<{ id: string; secret: string }>('POST', `/api/v1/workspaces/${ws}/api-keys`, { headers: bearer(owner), body: { name: role, role } })).body;
    }
    responder = new StandInOAuthResponder(sut.app.get<Topology>(BUS_TOPOLOGY));
    await responder.start();
  });

  afterAll(async () => {
    await responder?.stop();
    await sut?.close();
  });

  beforeEach(() => {
    responder.begins.length = 0;
    responder.completes.length = 0;
    responder.refusals.clear();
  });

  describe('beginning a connection', () => {
    it('answers 201 with the authorization URL, sending the vault the callback under the request origin and the caller as actor', async () => {
      const answer = await begin<Begun>({ url: SERVER, oauth: { credential: 'tracker_oauth', scopes: ['issues:read'] }, returnTo: `/w/${ws}/workers/wk_1` });

      expect(answer.status).toBe(201);
      expect(answer.body).toEqual({
        authorizationUrl: expect.stringMatching(/^https:\/\/auth\.example\.com\/authorize\?/),
        expiresAt: expect.any(String),
        credential: 'tracker_oauth',
        issuer: 'https://auth.example.com',
        clientId: expect.stringMatching(/^dyn-/),
        registered: true,
      });
      expect(responder.begins).toEqual([
        {
          workspaceId: ws,
          resource: SERVER,
          oauth: { credential: 'tracker_oauth', scopes: ['issues:read'] },
          redirectUri: `${sut.baseUrl}/api/v1/mcp/oauth/callback`,
          returnTo: `/w/${ws}/workers/wk_1`,
          actor: { kind: 'api_key', id: keys.admin.id },
        },
      ]);
    });

    it('passes a pre-registered client id on, scopes defaulting to none, and no returnTo when none is given', async () => {
      const answer = await begin<Begun>({ url: SERVER, oauth: { credential: 'tracker_oauth', clientId: 'packetagent-prod' } }, { key: owner });

      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({ clientId: 'packetagent-prod', registered: false });
      expect(responder.begins).toEqual([expect.objectContaining({ oauth: { credential: 'tracker_oauth', scopes: [], clientId: 'packetagent-prod' } })]);
      expect(responder.begins[0]).not.toHaveProperty('returnTo');
    });

    it('answers the vault refusals of a server that cannot be connected as declared with 422 and their message, retryable or not', async () => {
      const cases = [
        [`${SERVER}/no-metadata`, new Refused(OAuthErrorCodes.discoveryFailed, 'https://mcp.example.com/.well-known/oauth-protected-resource answered 404', true)],
        [`${SERVER}/no-dcr`, new Refused(OAuthErrorCodes.clientRequired, 'https://auth.example.com offers no dynamic client registration: give oauth.clientId')],
        [`${SERVER}/dcr-refused`, new Refused(OAuthErrorCodes.registrationFailed, 'the registration endpoint answered invalid_redirect_uri')],
      ] as const;
      for (const [url, refusal] of cases) {
        responder.refusals.set(url, refusal);
        const answer = await begin({ url, oauth: { credential: 'tracker_oauth' } });
        expect([refusal.code, answer.status, answer.headers.get('content-type')]).toEqual([refusal.code, 422, expect.stringContaining('application/problem+json')]);
        expect(answer.body).toMatchObject({ status: 422, title: 'Unprocessable Content', code: refusal.code, detail: refusal.message });
      }
    });

    it.each([
      ['a URL that is not http(s)', { url: 'ftp://mcp.example.com/mcp', oauth: { credential: 'tracker_oauth' } }, 'url'],
      ['a URL that is not a URL', { url: 'mcp.example.com', oauth: { credential: 'tracker_oauth' } }, 'url'],
      ['no URL', { oauth: { credential: 'tracker_oauth' } }, 'url'],
      ['a credential name that is not one', { url: SERVER, oauth: { credential: 'Tracker-OAuth' } }, 'oauth.credential'],
      ['no oauth', { url: SERVER }, 'oauth'],
      ['a scope with a space', { url: SERVER, oauth: { credential: 'tracker_oauth', scopes: ['a b'] } }, 'oauth.scopes.0'],
      ['an oauth field the contract does not have', { url: SERVER, oauth: { credential: 'tracker_oauth', secret: 'x' } }, 'oauth'],
      ['a returnTo outside the console', { url: SERVER, oauth: { credential: 'tracker_oauth' }, returnTo: '/api/v1/workspaces' }, 'returnTo'],
      ['a returnTo on another host', { url: SERVER, oauth: { credential: 'tracker_oauth' }, returnTo: 'https://evil.example/console' }, 'returnTo'],
      ['a protocol-relative returnTo', { url: SERVER, oauth: { credential: 'tracker_oauth' }, returnTo: '//evil.example/console' }, 'returnTo'],
      ['a NUL in the URL', { url: `${SERVER}/a\u0000b`, oauth: { credential: 'tracker_oauth' } }, 'url'],
      ['a NUL in the credential', { url: SERVER, oauth: { credential: 'tracker\u0000oauth' } }, 'oauth.credential'],
      ['a NUL in the client id', { url: SERVER, oauth: { credential: 'tracker_oauth', clientId: 'a\u0000b' } }, 'oauth.clientId'],
      ['a NUL in returnTo', { url: SERVER, oauth: { credential: 'tracker_oauth' }, returnTo: '/w\u0000' }, 'returnTo'],
      ['an actor of its own', { url: SERVER, oauth: { credential: 'tracker_oauth' }, actor: { kind: 'system', id: 'root' } }, ''],
    ])('answers 400 problem+json for %s, naming the field, and sends the vault nothing', async (what, body, field) => {
      const answer = await begin(body);

      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      // A NUL is refused at the HTTP boundary, before the route's own validation, at the same path.
      expect(answer.body.code).toBe(what.includes('NUL') ? 'invalid_characters' : 'validation_failed');
      expect(answer.body.errors?.map((issue) => issue.path)).toContain(field);
      expect(responder.begins).toEqual([]);
    });

    it('refuses viewers and members with 403 naming the admin permission, and a key of another workspace with 404; nothing reaches the vault', async () => {
      for (const role of ['viewer', 'member'] as const) {
        const answer = await begin({ url: SERVER, oauth: { credential: 'tracker_oauth' } }, { key: keys[role].secret });
        expect([role, answer.status, answer.body.code]).toEqual([role, 403, 'permission_denied']);
        expect(answer.body.detail).toContain('admin');
      }
      const elsewhere = await begin({ url: SERVER, oauth: { credential: 'tracker_oauth' } }, { workspace: 'ws_elsewhere' });
      expect(elsewhere.status).toBe(404);
      const anonymous = await begin({ url: SERVER, oauth: { credential: 'tracker_oauth' } }, { headers: {} });
      expect(anonymous.status).toBe(401);
      expect(responder.begins).toEqual([]);
    });
  });

  describe('the callback', () => {
    const started = async (fields: Record<string, unknown> = {}) => {
      const answer = await begin<Begun>({ url: SERVER, oauth: { credential: 'tracker_oauth' }, ...fields });
      expect(answer.status).toBe(201);
      return responder.stateOf(answer.body);
    };

    it('completes the flow without any session or key and answers 303 to the console page, with mcp_connected added and neither code nor state', async () => {
      const state = await started({ returnTo: `/w/${ws}/workers/wk_1?tab=mcp` });

      const answer = await callback({ state, code: 'the-authorization-code', iss: 'https://auth.example.com' });

      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toBe(`/w/${ws}/workers/wk_1?tab=mcp&mcp_connected=tracker_oauth`);
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(responder.completes).toEqual([{ state, code: 'the-authorization-code' }]);
      const listed = await sut.request<{ items: OAuthConnection[] }>('GET', connectionsPath(), { headers: bearer(keys.viewer.secret) });
      expect(listed.status).toBe(200);
      expect(listed.body.items).toEqual([expect.objectContaining({ credential: 'tracker_oauth', resource: SERVER, state: 'connected', connectedBy: { kind: 'api_key', id: keys.admin.id } })]);
    });

    it('answers a small self-contained page when the flow names no console page, under the console CSP', async () => {
      const state = await started();

      const answer = await callback({ state, code: 'another-authorization-code' });
      const html = await answer.text();

      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = answer.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(html).toContain(`<style nonce="${nonce}">`);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(html).toContain('<code>tracker_oauth</code>');
      expect(html).toContain('You may close this window.');
      expect(html).not.toMatch(/<script|src=|href=/);
      expect(html).not.toContain(state);
      expect(html).not.toContain('another-authorization-code');
    });

    it('answers a used state 400: a page for a browser, problem+json when Accept prefers JSON', async () => {
      const state = await started();
      expect((await callback({ state, code: 'first-use-of-the-code' })).status).toBe(200);

      const page = await callback({ state, code: 'first-use-of-the-code' });
      const html = await page.text();
      expect(page.status).toBe(400);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(html).toContain('the state is unknown, used or past its ten minutes');
      expect(html).not.toContain(state);

      const json = await callback({ state, code: 'first-use-of-the-code' }, 'application/json');
      expect(json.status).toBe(400);
      expect(json.headers.get('content-type')).toContain('application/problem+json');
      expect(await json.json()).toMatchObject({ status: 400, title: 'Bad Request', code: OAuthErrorCodes.flowUnknown });
    });

    it('answers a refused consent 400 with the escaped description, and an exchange failure without the code or state it quoted', async () => {
      const denied = await started();
      const page = await callback({ state: denied, error: 'access_denied', error_description: '<script>alert(1)</script> the user said no\u0007' });
      const html = await page.text();
      expect(page.status).toBe(400);
      expect(html).toContain('the authorization server answered access_denied: &#60;script&#62;alert(1)&#60;/script&#62; the user said no');
      expect(html).not.toContain('<script>');
      expect(responder.completes.at(-1)).toEqual({ state: denied, error: 'access_denied', errorDescription: '<script>alert(1)</script> the user said no' });

      const failing = await started();
      const json = await callback({ state: failing, code: REFUSED_CODE }, 'application/problem+json');
      const problem = (await json.json()) as Problem;
      expect(json.status).toBe(400);
      expect(problem).toMatchObject({ code: OAuthErrorCodes.exchangeFailed, detail: 'the token endpoint answered invalid_grant for code [redacted] (state [redacted])' });
      const again = await started();
      const failedPage = await (await callback({ state: again, code: REFUSED_CODE })).text();
      expect(failedPage).not.toContain(REFUSED_CODE);
      expect(failedPage).not.toContain(again);
    });

    it('answers 400 without asking the vault for no state, a repeated one, or one with a NUL', async () => {
      for (const accept of ['application/json', undefined]) {
        const nul = await callback('state=a%00b&code=abc', accept);
        const problem = (await nul.json()) as Problem;
        expect([accept, nul.status, nul.headers.get('content-type'), problem.code, problem.errors?.map((issue) => issue.path)]).toEqual([
          accept,
          400,
          'application/problem+json; charset=utf-8',
          'invalid_characters',
          ['state'],
        ]);
      }
      for (const [query, path] of [['code=abc', 'state'], ['', 'state'], ['state=&code=abc', 'state'], ['state=a&state=b&code=abc', 'state'], ['state=abc&code=a%0Ab', 'code']] as const) {
        const json = await callback(query, 'application/json');
        const problem = (await json.json()) as Problem;
        expect([query, json.status, problem.code, problem.errors?.map((issue) => issue.path)]).toEqual([query, 400, 'validation_failed', [path]]);
        const page = await callback(query);
        expect([query, page.status, page.headers.get('content-type')]).toEqual([query, 400, 'text/html; charset=utf-8']);
        expect(await page.text()).toContain(`${path}:`);
      }
      expect(responder.completes).toEqual([]);
    });

    it('ignores a session or key that comes along: the state alone decides', async () => {
      const state = await started();
      const answer = await requestJson(sut.baseUrl, 'GET', `/api/v1/mcp/oauth/callback?state=${state}&code=with-a-bad-key`, { headers: { authorization: 'Bearer pa_not_a_key' } });
      expect(answer.status).toBe(200);
    });
  });

  describe('across workspaces', () => {
    let ownerSession: SignedIn;
    let bob: SignedIn;
    let other: string;
    let otherKey: string;

    beforeAll(async () => {
      ownerSession = await signIn(sut, 'owner@example.com', OWNER_PASSWORD);
      other = (await sut.request<{ id: string }>('POST', '/api/v1/workspaces', { body: { name: 'Other' }, headers: ownerSession.headers() })).body.id;
      otherKey = (await sut.request<{ secret: string }>('POST', `/api/v1/workspaces/${other}/api-keys`, { headers: ownerSession.headers(), body: { name: 'other-owner', role: 'owner' } })).body.secret;
      const bobId = await insertUser(sut, 'bob@example.com', 'bob password 1234');
      await sut.db.pool.query(`INSERT INTO identity.memberships (user_id, workspace_id, role) VALUES ($1, $2, 'admin')`, [bobId, ws]);
      bob = await signIn(sut, 'bob@example.com', 'bob password 1234');
    });

    it("answers 404 to an admin of one workspace for another's connections, and lists each workspace's own", async () => {
      for (const method of ['GET', 'POST'] as const) {
        const asBob = await sut.request(method, connectionsPath(other), { headers: bob.headers(), ...(method === 'POST' ? { body: { url: SERVER, oauth: { credential: 'theirs' } } } : {}) });
        expect([method, asBob.status]).toEqual([method, 404]);
        const asKey = await sut.request(method, connectionsPath(other), { headers: bearer(keys.admin.secret), ...(method === 'POST' ? { body: { url: SERVER, oauth: { credential: 'theirs' } } } : {}) });
        expect([method, asKey.status]).toEqual([method, 404]);
      }
      expect(responder.begins).toEqual([]);

      const theirs = await sut.request<{ items: OAuthConnection[] }>('GET', connectionsPath(other), { headers: bearer(otherKey) });
      expect(theirs.body).toEqual({ items: [] });
      const asSession = await sut.request<Begun>('POST', connectionsPath(), { headers: bob.headers(), body: { url: SERVER, oauth: { credential: 'bobs_oauth' } } });
      expect(asSession.status).toBe(201);
      expect(responder.begins.at(-1)).toMatchObject({ workspaceId: ws, actor: { kind: 'user' } });
      expect((await sut.request('POST', connectionsPath(), { headers: bob.headers(false), body: { url: SERVER, oauth: { credential: 'bobs_oauth' } } })).status).toBe(403);
    });
  });

  it('documents the three routes with their permission, bodies and answers; the callback without security', async () => {
    type Operation = { tags?: string[]; 'x-required-permission'?: string; security?: unknown[]; requestBody?: unknown; responses: Record<string, unknown>; parameters?: Array<{ name: string; in: string }> };
    const document = (await sut.request<{ paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } }>('GET', '/api/v1/openapi.json')).body;
    const post = document.paths['/api/v1/workspaces/{ws}/mcp/connections']?.['post'];
    const list = document.paths['/api/v1/workspaces/{ws}/mcp/connections']?.['get'];
    const back = document.paths['/api/v1/mcp/oauth/callback']?.['get'];

    expect([post?.tags, list?.tags, back?.tags]).toEqual([['mcp'], ['mcp'], ['mcp']]);
    expect([post?.['x-required-permission'], list?.['x-required-permission'], back?.['x-required-permission']]).toEqual(['admin', 'inspect', undefined]);
    expect(back?.security).toBeUndefined();
    expect(JSON.stringify(post?.requestBody)).toContain('BeginConnectionBodyDto');
    expect(document.components.schemas['BeginConnectionBodyDto']?.properties).toEqual(expect.objectContaining({ url: expect.anything(), oauth: expect.anything(), returnTo: expect.anything() }));
    expect(Object.keys(post?.responses ?? {})).toEqual(expect.arrayContaining(['201', '400', '422', '503', 'default']));
    expect(JSON.stringify(post?.responses['201'])).toContain('BeginConnectionAnswerDto');
    expect(JSON.stringify(list?.responses['200'])).toContain('ConnectionListDto');
    expect(Object.keys(back?.responses ?? {})).toEqual(expect.arrayContaining(['200', '303', '400']));
    expect(back?.parameters?.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual(expect.arrayContaining(['query:state', 'query:code', 'query:error', 'query:error_description']));
  });

  describe('with a public URL configured and without the vault', () => {
    beforeAll(async () => {
      await sut.restart({ publicUrl: 'https://agents.example.com/pa/' });
    });

    it('sends the callback under the public URL', async () => {
      const answer = await begin<Begun>({ url: SERVER, oauth: { credential: 'tracker_oauth' } });

      expect(answer.status).toBe(201);
      expect(responder.begins.map((request) => request.redirectUri)).toEqual(['https://agents.example.com/pa/api/v1/mcp/oauth/callback']);
    });

    it('answers 503 problem+json on every route while nothing answers the vault commands, and the callback a 503 page to a browser', async () => {
      await responder.stop();
      try {
        const begun = await begin({ url: SERVER, oauth: { credential: 'tracker_oauth' } });
        expect([begun.status, begun.body.code, begun.headers.get('content-type')]).toEqual([503, 'command_unavailable', expect.stringContaining('application/problem+json')]);
        const listed = await sut.request<Problem>('GET', connectionsPath(), { headers: bearer(keys.viewer.secret) });
        expect([listed.status, listed.body.code]).toEqual([503, 'command_unavailable']);
        const json = await callback({ state: 'some-state', code: 'some-code' }, 'application/json');
        expect([json.status, ((await json.json()) as Problem).code]).toEqual([503, 'command_unavailable']);
        const page = await callback({ state: 'some-state', code: 'some-code' });
        expect([page.status, page.headers.get('content-type')]).toEqual([503, 'text/html; charset=utf-8']);
        expect(await page.text()).toContain('no service is handling vault.oauth.complete');
      } finally {
        await responder.start();
      }
    });
  });
});
