import { eventually } from '@packetagent/testing';
import { ExitCode } from '../errors';
import { CliApi } from '../testing/cli-api.testkit';
import { mcpConnect, mcpConnections } from './mcp-connect';

// Answers shaped as the gateway's routes return them (OAuthCommands.begin and .connections in
// libs/contracts, the worker routes for the definition): these tests cover the requests the
// commands make, what they print and their exit codes.

const WORKERS = '/api/v1/workspaces/ws_demo/workers';
const CONNECTIONS = '/api/v1/workspaces/ws_demo/mcp/connections';
const WORKER = { id: 'wk_1', name: 'issue-triage', description: '', latestVersion: 2, createdAt: '2026-12-01T10:00:00.000Z' };
const SERVER_URL = 'https://mcp.example.com/mcp';
const AUTHORIZATION_URL = 'https://auth.example.com/authorize?response_type=code&client_id=dyn-1&state=s1';

const definition = {
  apiVersion: 'packetagent/v1',
  kind: 'Worker',
  name: 'issue-triage',
  mcp: [
    { name: 'tracker', transport: 'http', url: SERVER_URL, oauth: { credential: 'tracker_oauth', scopes: ['issues:read', 'issues:write'] }, trusted: false, tools: [] },
    { name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', credential: 'docs_token', trusted: false, tools: [] },
    { name: 'notes', transport: 'stdio', command: 'notes-mcp', args: [], trusted: true, tools: [] },
  ],
  tools: [],
};

const begun = { authorizationUrl: AUTHORIZATION_URL, expiresAt: '2026-12-01T10:10:00.000Z', credential: 'tracker_oauth', issuer: 'https://auth.example.com', clientId: 'dyn-1', registered: true };

function connection(fields: Record<string, unknown> = {}) {
  return {
    credential: 'tracker_oauth',
    version: 1,
    resource: SERVER_URL,
    issuer: 'https://auth.example.com',
    clientId: 'dyn-1',
    scope: 'issues:read issues:write',
    state: 'connected',
    reason: null,
    expiresAt: '2026-12-01T11:00:00.000Z',
    refreshable: true,
    connectedAt: '2026-11-30T09:00:00.000Z',
    connectedBy: { kind: 'api_key', id: 'key1' },
    refreshedAt: null,
    ...fields,
  };
}

describe(mcpConnect.name, () => {
  let api: CliApi;
  const requests = () => api.seen.map((request) => `${request.method} ${request.url}`);
  const posted = () => api.seen.filter((request) => request.method === 'POST').map((request) => JSON.parse(request.body) as unknown);

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = {};
    api.json('GET', WORKERS, 200, { items: [WORKER], nextCursor: null });
    api.json('GET', `${WORKERS}/wk_1/versions`, 200, { items: [1, 2].map((n) => ({ workerId: 'wk_1', version: n, digest: 'a'.repeat(64), createdAt: '2026-12-01T10:05:00.000Z' })) });
    api.json('GET', `${WORKERS}/wk_1/versions/2`, 200, { workerId: 'wk_1', version: 2, digest: 'a'.repeat(64), definition, createdAt: '2026-12-01T10:05:00.000Z' });
    api.json('POST', CONNECTIONS, 201, begun);
  });

  it("posts the server's oauth from the latest version, prints the URL to open, and waits for a connection newer than the one there before", async () => {
    // The credential was connected once already: that connection is not the one waited for.
    api.json('GET', CONNECTIONS, 200, { items: [connection({ state: 'reconnect_required', reason: 'invalid_grant: the refresh token was revoked', expiresAt: null })] });

    const running = api.cli(['mcp', 'connect', 'issue-triage', 'tracker']);
    await eventually(() => requests().includes(`POST ${CONNECTIONS}`), { intervalMs: 5, what: 'the connection to be posted' });
    api.json('GET', CONNECTIONS, 200, { items: [connection({ version: 2, connectedAt: '2026-12-01T10:01:00.000Z' })] });
    const answer = await running;

    expect(answer.code).toBe(ExitCode.ok);
    expect(requests().slice(0, 5)).toEqual([`GET ${WORKERS}`, `GET ${WORKERS}/wk_1/versions`, `GET ${WORKERS}/wk_1/versions/2`, `GET ${CONNECTIONS}`, `POST ${CONNECTIONS}`]);
    expect(posted()).toEqual([{ url: SERVER_URL, oauth: { credential: 'tracker_oauth', scopes: ['issues:read', 'issues:write'] } }]);
    expect(answer.stdout.split('\n')).toEqual([
      `Open this URL in a browser to connect issue-triage/tracker (${SERVER_URL}) as credential tracker_oauth (before 2026-12-01T10:10:00.000Z):`,
      `  ${AUTHORIZATION_URL}`,
      'authorization server https://auth.example.com, client dyn-1, registered for this connection',
      'waiting up to 600 s for the connection (Ctrl-C stops waiting; the link stays valid until it expires)...',
      'connected tracker_oauth (expires 2026-12-01T11:00:00.000Z)',
      '',
    ]);
    expect(answer.stderr).toBe('');
  });

  it('takes the server from --url, --credential, --scope and --client-id, and with --no-wait prints the URL and returns', async () => {
    api.json('POST', CONNECTIONS, 201, { ...begun, credential: 'new_oauth', clientId: 'packetagent-prod', registered: false });
    const answer = await api.cli(['mcp', 'connect', '--url', 'https://new.example.com/mcp', '--credential', 'new_oauth', '--scope', 'read', '--scope', 'write', '--client-id', 'packetagent-prod', '--no-wait']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(requests()).toEqual([`POST ${CONNECTIONS}`]);
    expect(posted()).toEqual([{ url: 'https://new.example.com/mcp', oauth: { credential: 'new_oauth', scopes: ['read', 'write'], clientId: 'packetagent-prod' } }]);
    expect(answer.stdout.split('\n')).toEqual([
      'Open this URL in a browser to connect https://new.example.com/mcp as credential new_oauth (before 2026-12-01T10:10:00.000Z):',
      `  ${AUTHORIZATION_URL}`,
      'authorization server https://auth.example.com, client packetagent-prod',
      '',
    ]);

    api.json('POST', CONNECTIONS, 201, begun);
    const json = await api.cli(['--json', 'mcp', 'connect', 'issue-triage', 'tracker', '--no-wait']);
    expect(json.code).toBe(ExitCode.ok);
    expect(JSON.parse(json.stdout)).toEqual(begun);
  });

  it('gives up after --timeout seconds with exit 1 when no new connection shows, having printed the URL', async () => {
    api.json('GET', CONNECTIONS, 200, { items: [connection()] });

    const answer = await api.cli(['mcp', 'connect', 'issue-triage', 'tracker', '--timeout', '1']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stdout).toContain(`  ${AUTHORIZATION_URL}\n`);
    expect(answer.stdout).toContain('waiting up to 1 s');
    expect(answer.stderr).toBe('error: no new connection of tracker_oauth after 1 s: open the URL and consent, then run `packetagent mcp connections` to check, or run this command again for a new link\n');
  });

  it('with --json prints only the result on stdout, the URL to open on stderr', async () => {
    api.json('GET', CONNECTIONS, 200, { items: [] });

    const running = api.cli(['--json', 'mcp', 'connect', 'issue-triage', 'tracker']);
    await eventually(() => requests().includes(`POST ${CONNECTIONS}`), { intervalMs: 5, what: 'the connection to be posted' });
    api.json('GET', CONNECTIONS, 200, { items: [connection({ expiresAt: null })] });
    const answer = await running;

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stderr).toContain(`  ${AUTHORIZATION_URL}\n`);
    expect(JSON.parse(answer.stdout)).toEqual({ ...begun, connection: connection({ expiresAt: null }) });
  });

  it('exits 1 naming what is wrong with the server, and refuses flags that do not go together without asking the API', async () => {
    const stdio = await api.cli(['mcp', 'connect', 'issue-triage', 'notes']);
    expect([stdio.code, stdio.stderr]).toEqual([ExitCode.failure, 'error: server notes of issue-triage version 2 does not authorize with oauth: there is nothing to connect\n']);
    const bearer = await api.cli(['mcp', 'connect', 'issue-triage', 'docs']);
    expect(bearer.stderr).toContain('server docs of issue-triage version 2 does not authorize with oauth');
    const unknown = await api.cli(['mcp', 'connect', 'issue-triage', 'wiki']);
    expect(unknown.stderr).toBe('error: version 2 of issue-triage declares no MCP server "wiki" (it declares tracker, docs, notes)\n');
    const noWorker = await api.cli(['mcp', 'connect', 'nope', 'tracker']);
    expect(noWorker.stderr).toBe('error: no worker named or identified "nope" in this workspace\n');
    api.json('GET', `${WORKERS}/wk_1/versions`, 200, { items: [] });
    const noVersion = await api.cli(['mcp', 'connect', 'issue-triage', 'tracker']);
    expect(noVersion.stderr).toContain('worker issue-triage has no versions yet: connect the server with --url and --credential first');
    expect(posted()).toEqual([]);

    api.seen.length = 0;
    for (const [argv, message] of [
      [['mcp', 'connect', 'issue-triage', 'tracker', '--credential', 'x'], '--credential go with --url'],
      [['mcp', 'connect', 'issue-triage', 'tracker', '--scope', 'a', '--client-id', 'c'], '--scope, --client-id go with --url'],
      [['mcp', 'connect', 'issue-triage'], 'name the worker and its server'],
      [['mcp', 'connect', '--url', 'https://new.example.com/mcp'], '--url needs --credential'],
      [['mcp', 'connect', '--url', 'ftp://new.example.com/mcp', '--credential', 'x'], 'is not http or https'],
      [['mcp', 'connect', '--url', 'new.example.com', '--credential', 'x'], 'is not a URL'],
      [['mcp', 'connect', 'issue-triage', 'tracker', '--timeout', '0'], 'must be a positive integer'],
    ] as const) {
      const answer = await api.cli([...argv]);
      expect([argv.join(' '), answer.code, answer.stderr]).toEqual([argv.join(' '), ExitCode.failure, expect.stringContaining(message)]);
    }
    expect(api.seen).toEqual([]);
  });

  it("exits with the API's refusal: 1 with the vault's reason for a server that cannot be connected, 3 without the admin permission", async () => {
    api.json('GET', CONNECTIONS, 200, { items: [] });
    api.json('POST', CONNECTIONS, 422, {
      type: 'urn:packetagent:problem:oauth_client_required',
      title: 'Unprocessable Content',
      status: 422,
      detail: 'https://auth.example.com offers no dynamic client registration: give oauth.clientId',
      code: 'oauth_client_required',
    });
    const refused = await api.cli(['mcp', 'connect', 'issue-triage', 'tracker']);
    expect([refused.code, refused.stderr]).toEqual([ExitCode.failure, 'error: Unprocessable Content: https://auth.example.com offers no dynamic client registration: give oauth.clientId\n']);
    expect(refused.stdout).toBe('');

    api.json('POST', CONNECTIONS, 403, { title: 'Forbidden', status: 403, detail: 'this needs the "admin" permission in the workspace', code: 'permission_denied' });
    const denied = await api.cli(['mcp', 'connect', 'issue-triage', 'tracker']);
    expect([denied.code, denied.stderr]).toEqual([ExitCode.auth, 'error: Forbidden: this needs the "admin" permission in the workspace\n']);
  });
});

describe(mcpConnections.name, () => {
  let api: CliApi;

  beforeAll(async () => {
    api = await new CliApi().start();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.routes = {};
  });

  it('prints a table of credential, state, resource, expiry and reason', async () => {
    api.json('GET', CONNECTIONS, 200, {
      items: [connection(), connection({ credential: 'wiki', resource: 'https://wiki.example.com/mcp', state: 'reconnect_required', reason: 'invalid_grant: token revoked', expiresAt: null })],
    });

    const answer = await api.cli(['mcp', 'connections']);

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stdout.split('\n')).toEqual([
      'CREDENTIAL     STATE               RESOURCE                      EXPIRES                   REASON',
      'tracker_oauth  connected           https://mcp.example.com/mcp   2026-12-01T11:00:00.000Z  -',
      'wiki           reconnect_required  https://wiki.example.com/mcp  -                         invalid_grant: token revoked',
      '',
    ]);
  });

  it('says when there are none, and with --json prints the answer', async () => {
    api.json('GET', CONNECTIONS, 200, { items: [] });

    expect((await api.cli(['mcp', 'connections'])).stdout).toBe('no OAuth connections\n');
    expect(JSON.parse((await api.cli(['--json', 'mcp', 'connections'])).stdout)).toEqual({ items: [] });
  });
});
