import { formatTime, type Tone } from '../../shared/format';
import type { McpServerView } from './mcp-servers';

/**
 * Mirrors of libs/contracts vault/oauth.v1.ts (OAuthConnectionSchema, OAuthReturnToSchema,
 * oauthResourceKey) and of the gateway's POST .../mcp/connections answer: the contract files
 * import zod, which the browser bundle does not carry.
 */
export interface OAuthConnection {
  credential: string;
  version: number;
  /** The protected resource (the MCP server's URL) the tokens are for. */
  resource: string;
  issuer: string;
  clientId: string;
  scope: string | null;
  /** `connected` or `reconnect_required`; a state the console does not know is shown as sent. */
  state: string;
  reason: string | null;
  expiresAt: string | null;
  refreshable: boolean;
  connectedAt: string;
  connectedBy: { kind: string; id: string };
  refreshedAt: string | null;
}

export interface BeginConnectionAnswer {
  authorizationUrl: string;
  expiresAt: string;
  credential: string;
  issuer: string;
  clientId: string;
  registered: boolean;
}

export interface ConnectionStatus {
  /** `connected`, `reconnect_required`, `not_connected`, or another resource's connection: `other_resource`. */
  state: string;
  badge: string;
  tone: Tone;
  text: string;
  /** The button's label: Connect when there is nothing to replace. */
  action: 'Connect' | 'Reconnect';
}

/** As oauthResourceKey: scheme, host and port lower-cased, the path without a trailing slash, no query or fragment. */
export function resourceKey(url: string): string | null {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`.toLowerCase();
  } catch {
    return null;
  }
}

/** How the connection of a server that authorizes with OAuth stands, from GET .../mcp/connections; null for any other server. */
export function connectionStatus(server: Pick<McpServerView, 'target' | 'oauth'>, connections: readonly OAuthConnection[]): ConnectionStatus | null {
  if (!server.oauth) return null;
  const credential = server.oauth.credential;
  const connection = connections.find((item) => item.credential === credential);
  if (!connection) {
    return { state: 'not_connected', badge: 'not connected', tone: 'warn', text: `Not connected: no call can reach this server until the credential ${credential} holds a connection.`, action: 'Connect' };
  }
  const forThisServer = resourceKey(connection.resource) !== null && resourceKey(connection.resource) === resourceKey(server.target);
  if (!forThisServer) {
    return { state: 'other_resource', badge: 'another server', tone: 'bad', text: `The credential ${credential} holds a connection to ${connection.resource}, not to this server: connect it again for this one.`, action: 'Reconnect' };
  }
  if (connection.state === 'connected') {
    const expiry = connection.expiresAt ? `the access token expires ${formatTime(connection.expiresAt)}${connection.refreshable ? ' and is refreshed before then' : ' and cannot be refreshed'}` : 'the server gave no expiry';
    return { state: 'connected', badge: 'connected', tone: 'ok', text: `Connected ${formatTime(connection.connectedAt)}; ${expiry}.`, action: 'Reconnect' };
  }
  if (connection.state === 'reconnect_required') {
    return { state: 'reconnect_required', badge: 'reconnect required', tone: 'bad', text: `Reconnect required: ${connection.reason ?? 'the authorization server refused to refresh the token'}.`, action: 'Reconnect' };
  }
  return { state: connection.state, badge: connection.state, tone: 'neutral', text: connection.reason ?? '', action: 'Reconnect' };
}

/** OAuthReturnToSchema: a path of the console (served at the gateway's root), never another host's or the API's. */
const RETURN_TO = /^\/(?![/\\])(?!api(?:[/?]|$))[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$/;
const RETURN_TO_MAX = 1024;

/** The query parameter the gateway adds when it sends the operator back: the credential connected. */
export const CONNECTED_PARAM = 'mcp_connected';

/**
 * Where the authorization server sends the operator back: the console page now shown (a router
 * URL such as `/w/ws_1/workers/wk_1`). A confirmation already in the query is dropped, and a page
 * whose URL the contract would refuse falls back to its bare path.
 */
export function returnToFor(routerUrl: string): string {
  const [withoutFragment = ''] = routerUrl.split('#');
  const [path = '', query = ''] = withoutFragment.split(/\?(.*)/s);
  const params = new URLSearchParams(query);
  params.delete(CONNECTED_PARAM);
  const rest = params.toString();
  const bare = path || '/';
  const full = rest ? `${bare}?${rest}` : bare;
  if (full.length <= RETURN_TO_MAX && RETURN_TO.test(full)) return full;
  return bare.length <= RETURN_TO_MAX && RETURN_TO.test(bare) ? bare : '/';
}

/** POST .../mcp/connections for a server: its URL and `oauth` as the version declares them, and the page to come back to. */
export function connectRequest(workspaceId: string, server: Pick<McpServerView, 'target' | 'oauth'>, returnTo: string): { path: string; body: Record<string, unknown> } {
  if (!server.oauth) throw new Error('this server does not authorize with OAuth');
  const { credential, scopes, clientId } = server.oauth;
  return {
    path: `/api/v1/workspaces/${encodeURIComponent(workspaceId)}/mcp/connections`,
    body: { url: server.target, oauth: { credential, scopes, ...(clientId ? { clientId } : {}) }, returnTo },
  };
}

/** The authorization URL, only when it is one a browser may be sent to (http or https). */
export function authorizationTarget(answer: Pick<BeginConnectionAnswer, 'authorizationUrl'>): string {
  let url: URL;
  try {
    url = new URL(answer.authorizationUrl);
  } catch {
    throw new Error('the authorization URL the server answered is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('the authorization URL the server answered is not http or https');
  return url.toString();
}

/** CredentialNameSchema of libs/contracts vault.events.v1.ts. */
const CREDENTIAL_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** The credential `?mcp_connected=` names, when it names one; anything else is not confirmed. */
export function connectedCredential(param: string | null | undefined): string | null {
  return typeof param === 'string' && CREDENTIAL_NAME.test(param) ? param : null;
}
