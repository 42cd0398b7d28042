import type { ActorRef, OAuthConnection } from '@packetagent/contracts';
import type { AuthorizationServerMetadata, OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** What an OAuth credential's encrypted value holds: everything a refresh needs, and the tokens. */
export interface StoredConnection {
  v: 1;
  /** The MCP server's URL, as the definition names it; tokens are handed out for it alone. */
  resource: string;
  /** The resource indicator sent to the authorization server (RFC 8707), when it published one. */
  resourceIndicator: string | null;
  issuer: string;
  metadata: AuthorizationServerMetadata;
  client: OAuthClientInformationFull;
  tokens: OAuthTokens;
  /** When the access token expires (from expires_in), or null when the server did not say. */
  expiresAt: string | null;
  obtainedAt: string;
}

/** The connection's facts that are not secret, kept beside the ciphertext for listing without decrypting. */
export interface ConnectionFacts {
  resource: string;
  issuer: string;
  clientId: string;
  scope: string | null;
  expiresAt: string | null;
  refreshable: boolean;
  connectedAt: string;
  connectedBy: ActorRef;
  refreshedAt: string | null;
}

/** A connection made no earlier than `lifetime / REFRESH_AT_FRACTION` before its expiry is refreshed. */
const REFRESH_AT_FRACTION = 2;

export function connectionOf(tokens: OAuthTokens, base: Omit<StoredConnection, 'v' | 'tokens' | 'expiresAt' | 'obtainedAt'>, now: Date): StoredConnection {
  const expiresAt = typeof tokens.expires_in === 'number' && Number.isFinite(tokens.expires_in) ? new Date(now.getTime() + tokens.expires_in * 1000).toISOString() : null;
  return { v: 1, ...base, tokens, expiresAt, obtainedAt: now.toISOString() };
}

export function parseStoredConnection(plain: Buffer): StoredConnection | null {
  try {
    const value = JSON.parse(plain.toString('utf8')) as Partial<StoredConnection>;
    if (value.v !== 1 || typeof value.resource !== 'string' || typeof value.tokens?.access_token !== 'string' || typeof value.client?.client_id !== 'string') return null;
    return value as StoredConnection;
  } catch {
    return null;
  }
}

export function factsOf(connection: StoredConnection, connected: { at: string; by: ActorRef }, refreshedAt: string | null): ConnectionFacts {
  return {
    resource: connection.resource,
    issuer: connection.issuer,
    clientId: connection.client.client_id,
    scope: connection.tokens.scope ?? null,
    expiresAt: connection.expiresAt,
    refreshable: typeof connection.tokens.refresh_token === 'string' && connection.tokens.refresh_token.length > 0,
    connectedAt: connected.at,
    connectedBy: connected.by,
    refreshedAt,
  };
}

export type TokenDecision =
  | { kind: 'use' }
  | { kind: 'refresh'; expired: boolean }
  | { kind: 'reconnect'; reason: string };

/**
 * Whether the access token is handed out as it is or refreshed first: refreshed once it is within
 * `marginMs` of its expiry (or half its lifetime, for a short-lived token), so a call never goes out
 * with a token about to lapse. A connection whose last refresh was refused waits for an operator.
 */
export function decideToken(connection: StoredConnection, broken: { reason: string } | null, now: Date, marginMs: number): TokenDecision {
  if (broken) return { kind: 'reconnect', reason: broken.reason };
  if (!connection.expiresAt) return { kind: 'use' };
  const expiresAt = Date.parse(connection.expiresAt);
  const lifetime = Math.max(0, expiresAt - Date.parse(connection.obtainedAt));
  const margin = Math.min(marginMs, lifetime / REFRESH_AT_FRACTION);
  if (expiresAt - now.getTime() > margin) return { kind: 'use' };
  const expired = expiresAt <= now.getTime();
  if (!connection.tokens.refresh_token) {
    return expired ? { kind: 'reconnect', reason: 'the access token expired and the authorization server gave no refresh token' } : { kind: 'use' };
  }
  return { kind: 'refresh', expired };
}

/** OAuth error codes after which the same refresh token will not work again: an operator must connect anew. */
const PERMANENT_REFRESH_ERRORS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client', 'invalid_scope', 'access_denied', 'unsupported_grant_type', 'invalid_target']);

export type RefreshFailure = { permanent: boolean; reason: string };

/** Why a refresh failed, worded for the operator, and whether retrying could help. */
export function refreshFailure(error: unknown): RefreshFailure {
  const code = typeof (error as { errorCode?: unknown })?.errorCode === 'string' ? (error as { errorCode: string }).errorCode : null;
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
  if (code) return { permanent: PERMANENT_REFRESH_ERRORS.has(code), reason: `the authorization server refused the refresh (${code}${message && message !== code ? `: ${message}` : ''})` };
  return { permanent: false, reason: `the authorization server could not be reached to refresh the token: ${message}` };
}

/** After a refresh: the new tokens, keeping the refresh token when the server did not rotate it. */
export function refreshed(connection: StoredConnection, tokens: OAuthTokens, now: Date): StoredConnection {
  const merged: OAuthTokens = { ...tokens, ...(tokens.refresh_token ? {} : connection.tokens.refresh_token ? { refresh_token: connection.tokens.refresh_token } : {}) };
  return connectionOf(merged, { resource: connection.resource, resourceIndicator: connection.resourceIndicator, issuer: connection.issuer, metadata: connection.metadata, client: connection.client }, now);
}

export function connectionView(row: { name: string; version: number; facts: ConnectionFacts; refreshError: string | null }): OAuthConnection {
  return {
    credential: row.name,
    version: row.version,
    resource: row.facts.resource,
    issuer: row.facts.issuer,
    clientId: row.facts.clientId,
    scope: row.facts.scope,
    state: row.refreshError ? 'reconnect_required' : 'connected',
    reason: row.refreshError,
    expiresAt: row.facts.expiresAt,
    refreshable: row.facts.refreshable,
    connectedAt: row.facts.connectedAt,
    connectedBy: row.facts.connectedBy,
    refreshedAt: row.facts.refreshedAt,
  };
}
