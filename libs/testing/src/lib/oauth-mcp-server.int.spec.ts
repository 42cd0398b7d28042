import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { discoverOAuthServerInfo, exchangeAuthorization, refreshAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationServerMetadata, OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { startOAuthMcpServer, type OAuthMcpServer } from './oauth-mcp-server';

const REDIRECT = 'http://127.0.0.1:9/callback';

interface Discovered {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata;
}

async function discover(server: OAuthMcpServer): Promise<Discovered> {
  const info = await discoverOAuthServerInfo(server.url);
  if (!info.authorizationServerMetadata) throw new Error('no authorization server metadata');
  return { authorizationServerUrl: info.authorizationServerUrl, metadata: info.authorizationServerMetadata };
}

/** Plays the browser: GETs the authorization URL and reads the code (and state) from the redirect. */
async function authorize(as: Discovered, clientInformation: OAuthClientInformationMixed, resource: string | undefined, state = 'state-1'): Promise<{ tokens: OAuthTokens; location: URL }> {
  const { authorizationUrl, codeVerifier } = await startAuthorization(as.authorizationServerUrl, { metadata: as.metadata, clientInformation, redirectUrl: REDIRECT, scope: 'tools', state, resource });
  const answer = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  const location = new URL(answer.headers.get('location') ?? '');
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  expect(location.searchParams.get('state')).toBe(state);
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location.href}`);
  const tokens = await exchangeAuthorization(as.authorizationServerUrl, { metadata: as.metadata, clientInformation, authorizationCode: code, codeVerifier, redirectUri: REDIRECT, resource });
  return { tokens, location };
}

async function connect(server: OAuthMcpServer, token: string): Promise<Client> {
  const client = new Client({ name: 'oauth-spec', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

async function echo(server: OAuthMcpServer, token: string, text: string): Promise<unknown> {
  const client = await connect(server, token);
  try {
    return (await client.callTool({ name: 'echo', arguments: { text } })).content;
  } finally {
    await client.close();
  }
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function rawInitialize(server: OAuthMcpServer, token?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  return fetch(server.url, { method: 'POST', headers, body: JSON.stringify(initialize) });
}

describe('startOAuthMcpServer', () => {
  let server: OAuthMcpServer;
  let as: Discovered;
  let client: OAuthClientInformationMixed;

  beforeAll(async () => {
    server = await startOAuthMcpServer();
    as = await discover(server);
    client = await registerClient(as.authorizationServerUrl, {
      metadata: as.metadata,
      clientMetadata: { client_name: 'oauth-spec', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    });
  });

  afterAll(async () => {
    await server.close();
  });

  afterEach(() => {
    server.accessTokenLifetimeSeconds = 3600;
    server.refuseRefresh = false;
  });

  it('publishes RFC 9728 and RFC 8414 metadata on loopback', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.issuer).toBe(`http://${server.host}/`);
    expect(as.authorizationServerUrl).toBe(server.issuer);
    expect(as.metadata).toMatchObject({
      issuer: server.issuer,
      authorization_endpoint: `${server.issuer}authorize`,
      token_endpoint: `${server.issuer}token`,
      registration_endpoint: `${server.issuer}register`,
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['tools'],
    });
    expect(as.metadata.token_endpoint_auth_methods_supported).toContain('none');
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = await (await fetch(`http://${server.host}${path}`)).json();
      expect(metadata).toMatchObject({ resource: server.url, authorization_servers: [server.issuer], scopes_supported: ['tools'] });
    }
    expect(server.stats.registrations).toBe(1);
  });

  it('runs discover, register, authorize, exchange, and a tool call with the token', async () => {
    const { tokens } = await authorize(as, client, server.url);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'tools' });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(server.issued.at(-1)).toMatchObject({ accessToken: tokens.access_token, via: 'code' });

    const mcp = await connect(server, tokens.access_token);
    try {
      expect(await mcp.callTool({ name: 'echo', arguments: { text: 'hello' } })).toMatchObject({ content: [{ type: 'text', text: 'hello' }] });
      expect(await mcp.callTool({ name: 'whoami', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: client.client_id }] });
    } finally {
      await mcp.close();
    }
    expect(server.callTokens.slice(-2)).toEqual([tokens.access_token, tokens.access_token]);
    expect(server.stats).toMatchObject({ authorizations: 1, codeExchanges: 1, toolCalls: 2 });
  });

  it('answers an unauthenticated call with 401 and the resource metadata URL', async () => {
    const rejectedBefore = server.stats.rejectedBearers;
    const anonymous = await rawInitialize(server);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toContain(`resource_metadata="http://${server.host}/.well-known/oauth-protected-resource/mcp"`);
    expect(server.stats.rejectedBearers).toBe(rejectedBefore);

    const unknown = await rawInitialize(server, 'not-a-token');
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await expect(connect(server, 'not-a-token')).rejects.toMatchObject({ code: 401 });
    expect(server.stats.rejectedBearers).toBe(rejectedBefore + 2);
  });

  it('rotates the refresh token on every refresh and refuses the old one', async () => {
    const { tokens } = await authorize(as, client, server.url);
    const refreshed = await refreshAuthorization(as.authorizationServerUrl, { metadata: as.metadata, clientInformation: client, refreshToken: tokens.refresh_token!, resource: server.url });
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toEqual(expect.any(String));
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(server.issued.at(-1)).toMatchObject({ accessToken: refreshed.access_token, via: 'refresh' });
    expect(await echo(server, refreshed.access_token, 'after refresh')).toEqual([{ type: 'text', text: 'after refresh' }]);
    expect(server.callTokens.at(-1)).toBe(refreshed.access_token);

    const refusedBefore = server.stats.refusedRefreshes;
    const stale = refreshAuthorization(as.authorizationServerUrl, { metadata: as.metadata, clientInformation: client, refreshToken: tokens.refresh_token!, resource: server.url });
    await expect(stale).rejects.toBeInstanceOf(InvalidGrantError);
    expect(server.stats.refusedRefreshes).toBe(refusedBefore + 1);
    expect(server.stats.refreshes).toBe(1);
  });

  it('refuses every refresh with invalid_grant while refuseRefresh is set', async () => {
    const { tokens } = await authorize(as, client, server.url);
    server.refuseRefresh = true;
    const refresh = () => refreshAuthorization(as.authorizationServerUrl, { metadata: as.metadata, clientInformation: client, refreshToken: tokens.refresh_token!, resource: server.url });
    await expect(refresh()).rejects.toMatchObject({ errorCode: 'invalid_grant', message: 'refresh token revoked' });
    server.refuseRefresh = false;
    expect((await refresh()).access_token).toEqual(expect.any(String));
  });

  it('rejects an expired access token with 401', async () => {
    server.accessTokenLifetimeSeconds = 0;
    const { tokens } = await authorize(as, client, server.url);
    expect(tokens.expires_in).toBe(0);
    const expired = await rawInitialize(server, tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await expect(connect(server, tokens.access_token)).rejects.toMatchObject({ code: 401 });
  });

  it('rejects a token issued for another resource at the MCP server', async () => {
    const { tokens } = await authorize(as, client, `http://${server.host}/elsewhere`);
    const answer = await rawInitialize(server, tokens.access_token);
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toContain('another resource');
  });

  it('refuses a code exchanged with the wrong PKCE verifier', async () => {
    const { authorizationUrl } = await startAuthorization(as.authorizationServerUrl, { metadata: as.metadata, clientInformation: client, redirectUrl: REDIRECT, scope: 'tools', resource: server.url });
    const location = new URL((await fetch(authorizationUrl, { redirect: 'manual' })).headers.get('location') ?? '');
    const exchange = exchangeAuthorization(as.authorizationServerUrl, {
      metadata: as.metadata,
      clientInformation: client,
      authorizationCode: location.searchParams.get('code') ?? '',
      codeVerifier: 'x'.repeat(64),
      redirectUri: REDIRECT,
      resource: server.url,
    });
    await expect(exchange).rejects.toBeInstanceOf(InvalidGrantError);
  });
});

describe('startOAuthMcpServer without dynamic registration', () => {
  let server: OAuthMcpServer;

  beforeAll(async () => {
    server = await startOAuthMcpServer({ dynamicRegistration: false, scopes: ['tools', 'admin'] });
  });

  afterAll(async () => {
    await server.close();
  });

  it('offers no registration endpoint and authorizes a pre-registered client', async () => {
    const as = await discover(server);
    expect(as.metadata.registration_endpoint).toBeUndefined();
    expect(as.metadata.scopes_supported).toEqual(['tools', 'admin']);
    expect((await fetch(`${server.issuer}register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);

    const clientId = server.preRegister(REDIRECT);
    const { tokens } = await authorize(as, { client_id: clientId }, undefined, 'no-dcr');
    expect(await echo(server, tokens.access_token, 'pre-registered')).toEqual([{ type: 'text', text: 'pre-registered' }]);
    expect(server.stats).toMatchObject({ registrations: 0, authorizations: 1, codeExchanges: 1, toolCalls: 1 });
    expect(server.callTokens).toEqual([tokens.access_token]);
  });
});
