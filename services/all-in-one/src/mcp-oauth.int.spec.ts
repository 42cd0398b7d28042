import { TERMINAL_RUN_STATES } from '@packetagent/contracts';
import { eventually, startOAuthMcpServer, type OAuthMcpServer } from '@packetagent/testing';
import { bearer } from './testing/app.testkit';
import { startExecutionApp, type ExecutionApp } from './testing/execution.testkit';

const FINISH = '{ name: finish, arguments: { summary: done, criteria: [{ criterion: done, met: true }] } }';
/** How long an access token lives in the refresh test: its refresh margin is half of it (the 60 s default is capped there). */
const SHORT_LIFETIME_SECONDS = 8;

function worker(name: string, url: string, credential: string): string {
  return `apiVersion: packetagent/v1
kind: Worker
name: ${name}
model: { provider: scripted, model: ${name} }
instructions: Answer through the docs server.
mcp:
  - { name: docs, transport: http, url: "${url}", oauth: { credential: ${credential} } }
tools:
  - { tool: "mcp:docs/echo", approval: never, credentials: [${credential}] }
  - { tool: "mcp:docs/whoami", approval: always, credentials: [${credential}] }
exit: { finish: { criteria: [done] } }
triggers:
  - { manual: {} }
`;
}

interface Attention {
  id: string;
  runId: string;
  state: string;
  arguments: { kind: string; evidence: Record<string, string> };
  answeredBy: { kind: string; id: string } | null;
}

/**
 * MCP servers behind OAuth 2.1 (a real authorization server and resource server built with the
 * official SDK): connected through the API's consent flow, pinned and called with the vault's
 * token, refreshed when it expires mid-run, and a refused refresh told to a person while the run waits.
 */
describe('MCP servers with OAuth', () => {
  let peer: OAuthMcpServer;
  let env: ExecutionApp;

  beforeAll(async () => {
    peer = await startOAuthMcpServer();
    env = await startExecutionApp({ allowPrivate: [peer.host] });
  });
  afterAll(async () => {
    await env?.close();
    await peer?.close();
  });
  beforeEach(() => {
    peer.accessTokenLifetimeSeconds = 3600;
    peer.refuseRefresh = false;
  });

  const auth = () => bearer(env.owner);
  /** The operator's side of connecting: the API's consent URL, the authorization server's redirect, the callback. */
  const connect = async (credential: string) => {
    const begun = await env.sut.request<{ authorizationUrl: string; registered: boolean }>('POST', `/api/v1/workspaces/${env.ws}/mcp/connections`, {
      body: { url: peer.url, oauth: { credential } },
      headers: auth(),
    });
    expect(begun.status).toBe(201);
    const consent = await fetch(begun.body.authorizationUrl, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location') ?? '');
    expect(callback.pathname).toBe('/api/v1/mcp/oauth/callback');
    const back = await fetch(callback, { headers: { accept: 'text/html' } });
    expect(back.status).toBe(200);
    expect(await back.text()).toContain(credential);
  };
  const connections = async () => (await env.sut.request<{ items: Array<{ credential: string; state: string; reason: string | null }> }>('GET', `/api/v1/workspaces/${env.ws}/mcp/connections`, { headers: auth() })).body.items;
  const attentionOf = async (runId: string) => {
    const listed = await env.sut.request<{ items: Attention[] }>('GET', `/api/v1/workspaces/${env.ws}/attention`, { headers: auth() });
    return listed.body.items.filter((item) => item.runId === runId);
  };
  const approve = async (attentionId: string) => {
    const answered = await env.sut.request('POST', `/api/v1/workspaces/${env.ws}/attention/${attentionId}/approve`, { body: { scope: 'once' }, headers: auth() });
    expect(answered.status).toBe(200);
  };

  it('refuses a version whose OAuth server was never connected, saying how to connect it', async () => {
    const created = await env.sut.request<{ id: string }>('POST', `/api/v1/workspaces/${env.ws}/workers`, { body: { name: 'unconnected' }, headers: auth() });
    const version = await env.sut.request<{ code: string; detail: string }>('POST', `/api/v1/workspaces/${env.ws}/workers/${created.body.id}/versions`, {
      raw: worker('unconnected', peer.url, 'never_connected'),
      headers: { ...auth(), 'content-type': 'application/yaml' },
    });
    expect(version.status).toBe(400);
    expect(version.text).toContain('mcp_tools_not_pinned');
    expect(version.text).toContain('never_connected is not connected');
    expect(version.text).toContain('packetagent mcp connect');
  });

  it('calls with the connected token, and refreshes it once it expires mid-run', async () => {
    peer.accessTokenLifetimeSeconds = SHORT_LIFETIME_SECONDS;
    await connect('docs_oauth');
    const connected = peer.issued.at(-1)!;
    expect(connected.via).toBe('code');
    env.writeScript('refreshing', `turns:\n  - toolCalls: [{ name: docs__echo, arguments: { text: first } }]\n  - toolCalls: [{ name: docs__whoami, arguments: {} }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('refreshing', peer.url, 'docs_oauth'));
    peer.accessTokenLifetimeSeconds = 3600;
    const runId = await env.startRun(deploymentId);
    // The second call waits for approval: it is approved only once the first token has expired.
    const [waiting] = await eventually(async () => {
      const open = (await attentionOf(runId)).filter((item) => item.state === 'open');
      return open.length > 0 && open;
    }, { timeoutMs: 20_000, what: 'the second call to wait for approval' });
    await eventually(() => Date.now() > connected.expiresAt * 1000 + 100, { timeoutMs: (SHORT_LIFETIME_SECONDS + 5) * 1000, what: 'the connected token to expire' });
    await approve(waiting!.id);
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 20_000)).toBe('succeeded');

    expect(peer.callTokens).toHaveLength(2);
    const [first, second] = peer.callTokens;
    const secondIssued = peer.issued.find((issued) => issued.accessToken === second)!;
    expect(secondIssued.via).toBe('refresh');
    expect(second).not.toBe(connected.accessToken);
    expect(first).toBe(connected.accessToken);
    expect(peer.stats.rejectedBearers).toBe(0);
    const results = (await env.events(runId)).filter((event) => event.type === 'run.tool_result').map((event) => event.data);
    expect(results.slice(0, 2)).toMatchObject([{ tool: 'mcp', ok: true }, { tool: 'mcp', ok: true }]);
    // No token on the record, in the timeline or the attention inbox.
    const record = JSON.stringify([await env.events(runId), await attentionOf(runId)]);
    for (const issued of peer.issued) expect(record).not.toContain(issued.accessToken);
  });

  it('tells a person when the refresh is refused, waits without calling, and goes on once the server is connected again', async () => {
    await connect('wiki_oauth');
    env.writeScript('reconnecting', `turns:\n  - toolCalls: [{ name: docs__echo, arguments: { text: hello } }]\n  - toolCalls: [${FINISH}]\n`);
    const deploymentId = await env.deploy(worker('reconnecting', peer.url, 'wiki_oauth'));
    // Connected again with a token that is expired on issue, and every refresh refused from now on.
    peer.accessTokenLifetimeSeconds = 0;
    await connect('wiki_oauth');
    peer.refuseRefresh = true;
    const callsBefore = peer.stats.toolCalls;
    const runId = await env.startRun(deploymentId);

    const [asked] = await eventually(async () => {
      const found = (await attentionOf(runId)).filter((item) => item.arguments.kind === 'credential_reconnect');
      return found.length > 0 && found;
    }, { timeoutMs: 20_000, what: 'a person to be asked to connect the server again' });
    expect(asked!.state).toBe('open');
    expect(asked!.arguments.evidence).toMatchObject({ credential: 'wiki_oauth', reason: expect.stringContaining('invalid_grant') });
    expect(await env.waitForState(runId, ['waiting'], 10_000)).toBe('waiting');
    const waited = (await env.events(runId)).filter((event) => event.type === 'run.waiting').at(-1);
    expect(waited?.data).toMatchObject({ reason: 'reconnect', attentionId: asked!.id });
    expect(peer.stats.toolCalls).toBe(callsBefore);
    expect(await connections()).toContainEqual(expect.objectContaining({ credential: 'wiki_oauth', state: 'reconnect_required', reason: expect.stringContaining('invalid_grant') }));

    peer.refuseRefresh = false;
    peer.accessTokenLifetimeSeconds = 3600;
    await connect('wiki_oauth');
    expect(await env.waitForState(runId, TERMINAL_RUN_STATES, 20_000)).toBe('succeeded');
    expect(peer.stats.toolCalls).toBe(callsBefore + 1);
    expect(peer.callTokens.at(-1)).toBe(peer.issued.find((issued) => issued.via === 'code' && issued.accessToken === peer.callTokens.at(-1))?.accessToken);
    const answered = (await attentionOf(runId)).find((item) => item.id === asked!.id);
    expect(answered).toMatchObject({ state: 'approved', answeredBy: { kind: 'api_key' } });
    expect((await env.events(runId)).map((event) => event.type)).toContain('run.resumed');
    expect(await connections()).toContainEqual(expect.objectContaining({ credential: 'wiki_oauth', state: 'connected', reason: null }));
  });
});
