import { authorizationTarget, connectedCredential, connectionStatus, connectRequest, resourceKey, returnToFor, type OAuthConnection } from './mcp-connections';
import { mcpServersOf } from './mcp-servers';

// A server as a stored definition declares it, and connections as GET .../mcp/connections answers them.
const [tracker, plain] = mcpServersOf({
  mcp: [
    { name: 'tracker', transport: 'http', url: 'https://mcp.example.com/mcp', oauth: { credential: 'tracker_oauth', scopes: ['issues:read'], clientId: 'packetagent-prod' }, tools: [] },
    { name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', credential: 'docs_token', tools: [] },
  ],
});

function connection(fields: Partial<OAuthConnection> = {}): OAuthConnection {
  return {
    credential: 'tracker_oauth',
    version: 2,
    resource: 'https://MCP.example.com/mcp/',
    issuer: 'https://auth.example.com',
    clientId: 'packetagent-prod',
    scope: 'issues:read',
    state: 'connected',
    reason: null,
    expiresAt: '2026-12-01T11:00:00.000Z',
    refreshable: true,
    connectedAt: '2026-12-01T10:00:00.000Z',
    connectedBy: { kind: 'user', id: 'u1' },
    refreshedAt: null,
    ...fields,
  };
}

describe(connectionStatus.name, () => {
  it('says a connected server is connected, with when its token expires, and offers to reconnect', () => {
    expect(connectionStatus(tracker!, [connection()])).toEqual({
      state: 'connected',
      badge: 'connected',
      tone: 'ok',
      text: 'Connected 2026-12-01 10:00:00Z; the access token expires 2026-12-01 11:00:00Z and is refreshed before then.',
      action: 'Reconnect',
    });
    expect(connectionStatus(tracker!, [connection({ expiresAt: null })])?.text).toBe('Connected 2026-12-01 10:00:00Z; the server gave no expiry.');
    expect(connectionStatus(tracker!, [connection({ refreshable: false })])?.text).toContain('and cannot be refreshed');
  });

  it('says a reconnect is required with the reason the authorization server gave', () => {
    expect(connectionStatus(tracker!, [connection({ state: 'reconnect_required', reason: 'invalid_grant: the refresh token was revoked' })])).toEqual({
      state: 'reconnect_required',
      badge: 'reconnect required',
      tone: 'bad',
      text: 'Reconnect required: invalid_grant: the refresh token was revoked.',
      action: 'Reconnect',
    });
    expect(connectionStatus(tracker!, [connection({ state: 'reconnect_required' })])?.text).toBe('Reconnect required: the authorization server refused to refresh the token.');
  });

  it("says a server is not connected when its credential holds no connection, or holds one for another server's URL", () => {
    expect(connectionStatus(tracker!, [connection({ credential: 'other' })])).toEqual({
      state: 'not_connected',
      badge: 'not connected',
      tone: 'warn',
      text: 'Not connected: no call can reach this server until the credential tracker_oauth holds a connection.',
      action: 'Connect',
    });
    expect(connectionStatus(tracker!, [connection({ resource: 'https://elsewhere.example.com/mcp' })])).toMatchObject({ state: 'other_resource', tone: 'bad', action: 'Reconnect' });
    expect(connectionStatus(tracker!, [connection({ state: 'paused', reason: 'something new' })])).toMatchObject({ state: 'paused', badge: 'paused', text: 'something new' });
  });

  it('shows nothing for a server that does not authorize with OAuth', () => {
    expect(connectionStatus(plain!, [connection({ credential: 'docs_token' })])).toBeNull();
  });
});

describe(resourceKey.name, () => {
  it('compares as the vault does: scheme, host and port lower-cased, no trailing slash, query or fragment', () => {
    expect(resourceKey('HTTPS://MCP.Example.com:443/MCP/?a=1#f')).toBe('https://mcp.example.com/mcp');
    expect(resourceKey('not a url')).toBeNull();
  });
});

describe(connectRequest.name, () => {
  it("posts the server's URL and oauth as the version declares them, with the page to come back to", () => {
    expect(connectRequest('ws_1', tracker!, '/w/ws_1/workers/wk_1')).toEqual({
      path: '/api/v1/workspaces/ws_1/mcp/connections',
      body: { url: 'https://mcp.example.com/mcp', oauth: { credential: 'tracker_oauth', scopes: ['issues:read'], clientId: 'packetagent-prod' }, returnTo: '/w/ws_1/workers/wk_1' },
    });
    const [docs] = mcpServersOf({ mcp: [{ name: 'docs', transport: 'http', url: 'https://docs.example.com/mcp', oauth: { credential: 'docs_oauth' } }] });
    expect(connectRequest('ws_1', docs!, '/').body).toEqual({ url: 'https://docs.example.com/mcp', oauth: { credential: 'docs_oauth', scopes: [] }, returnTo: '/' });
    expect(() => connectRequest('ws_1', plain!, '/')).toThrow('does not authorize with OAuth');
  });
});

describe(returnToFor.name, () => {
  it('names the page shown as a console path, without a confirmation already in its query', () => {
    expect(returnToFor('/w/ws_1/workers/wk_1')).toBe('/w/ws_1/workers/wk_1');
    expect(returnToFor('/w/ws_1/workers/wk_1?mcp_connected=old&tab=mcp')).toBe('/w/ws_1/workers/wk_1?tab=mcp');
    expect(returnToFor('/w/ws_1/workers/wk_1#tools')).toBe('/w/ws_1/workers/wk_1');
    expect(returnToFor('/')).toBe('/');
  });

  it("falls back to the bare path when the query has what the contract refuses, and to the console's root past that", () => {
    expect(returnToFor('/w/ws_1/workers/wk_1?q=a"b')).toBe('/w/ws_1/workers/wk_1?q=a%22b');
    expect(returnToFor(`/w/ws_1/workers/wk_1?q=${'x'.repeat(1100)}`)).toBe('/w/ws_1/workers/wk_1');
    expect(returnToFor('/w/ws 1/<x>')).toBe('/');
  });
});

describe(authorizationTarget.name, () => {
  it('sends the browser only to an http(s) URL', () => {
    expect(authorizationTarget({ authorizationUrl: 'https://auth.example.com/authorize?state=s' })).toBe('https://auth.example.com/authorize?state=s');
    expect(() => authorizationTarget({ authorizationUrl: 'javascript:alert(1)' })).toThrow('not http or https');
    expect(() => authorizationTarget({ authorizationUrl: '/relative' })).toThrow('not a URL');
  });
});

describe(connectedCredential.name, () => {
  it('confirms only a credential name', () => {
    expect(connectedCredential('tracker_oauth')).toBe('tracker_oauth');
    for (const value of [null, undefined, '', 'Tracker', '<b>x</b>', 'a'.repeat(64)]) expect(connectedCredential(value)).toBeNull();
  });
});
