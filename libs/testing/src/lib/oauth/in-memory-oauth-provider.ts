import { randomBytes, randomUUID } from 'node:crypto';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import { InvalidGrantError, InvalidScopeError, InvalidTargetError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/** Counters the authorization server and the resource server keep, for assertions. */
export interface OAuthPeerStats {
  /** Clients registered through RFC 7591 dynamic registration (pre-registered ones are not counted). */
  registrations: number;
  /** Authorization requests answered with a code. */
  authorizations: number;
  /** authorization_code grants that issued tokens. */
  codeExchanges: number;
  /** refresh_token grants that issued tokens. */
  refreshes: number;
  /** refresh_token grants refused, whatever the reason (refuseRefresh, an unknown or already rotated token). */
  refusedRefreshes: number;
  /** tools/call requests the MCP server accepted. */
  toolCalls: number;
  /** Bearer tokens the MCP server refused (unknown, expired, or issued for another resource). */
  rejectedBearers: number;
}

export interface IssuedAccessToken {
  accessToken: string;
  via: 'code' | 'refresh';
  /** Seconds since the epoch (fractional), as in the SDK's AuthInfo.expiresAt. */
  expiresAt: number;
}

/** What the test may change while the server runs. */
export interface OAuthPeerSettings {
  accessTokenLifetimeSeconds: number;
  refuseRefresh: boolean;
}

interface Grant {
  clientId: string;
  scopes: string[];
  /** The RFC 8707 resource the grant is for, when the client named one. */
  resource?: string;
}

interface PendingCode extends Grant {
  challenge: string;
  redirectUri: string;
  expiresAt: number;
}

interface AccessToken extends Grant {
  expiresAt: number;
}

/** Where the SDK's authorization handler lets the provider answer: an Express response. */
interface RedirectingResponse {
  redirect(status: number, url: string): void;
}

const CODE_LIFETIME_SECONDS = 600;

const secret = (prefix: string): string => `${prefix}_${randomBytes(24).toString('base64url')}`;
const nowSeconds = (): number => Date.now() / 1000;

/** A resource identifier as compared: without a fragment and without one trailing slash. */
function comparable(resource: string): string {
  const hash = resource.indexOf('#');
  return (hash === -1 ? resource : resource.slice(0, hash)).replace(/\/$/, '');
}

export const sameResource = (a: string, b: string): boolean => comparable(a) === comparable(b);

/**
 * An OAuth 2.1 authorization server's state, in memory, behind the SDK's mcpAuthRouter: clients,
 * authorization codes (PKCE S256, checked by the SDK's token handler through challengeForAuthorizationCode),
 * access tokens, and refresh tokens that rotate on every use. It is also the MCP server's token verifier.
 */
export class InMemoryOAuthProvider implements OAuthServerProvider {
  readonly stats: OAuthPeerStats = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0, refusedRefreshes: 0, toolCalls: 0, rejectedBearers: 0 };
  readonly issued: IssuedAccessToken[] = [];
  readonly clientsStore: OAuthRegisteredClientsStore;
  private readonly clients = new Map<string, OAuthClientInformationFull>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly rotatedRefreshTokens = new Set<string>();

  constructor(
    private readonly settings: OAuthPeerSettings,
    private readonly config: { dynamicRegistration: boolean; scopes: string[]; resource: string },
  ) {
    const getClient = (clientId: string) => this.clients.get(clientId);
    // Without registerClient the SDK's router offers no registration_endpoint.
    this.clientsStore = config.dynamicRegistration ? { getClient, registerClient: (client) => this.register(client) } : { getClient };
  }

  /** A public client (token_endpoint_auth_method none) registered ahead of time; returns its client_id. */
  preRegister(redirectUri: string): string {
    const clientId = randomUUID();
    this.clients.set(clientId, {
      client_id: clientId,
      client_id_issued_at: Math.floor(nowSeconds()),
      client_name: 'pre-registered client',
      redirect_uris: [new URL(redirectUri).href],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    return clientId;
  }

  private register(client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>): OAuthClientInformationFull {
    // The SDK's registration handler has already generated client_id and client_id_issued_at.
    const generated = client as Partial<OAuthClientInformationFull>;
    const full: OAuthClientInformationFull = {
      ...client,
      client_id: generated.client_id ?? randomUUID(),
      client_id_issued_at: generated.client_id_issued_at ?? Math.floor(nowSeconds()),
    };
    this.clients.set(full.client_id, full);
    this.stats.registrations++;
    return full;
  }

  /** Consents at once: answers with a redirect to the client carrying the code and the state. */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: RedirectingResponse): Promise<void> {
    const requested = params.scopes ?? [];
    const unknown = requested.filter((scope) => !this.config.scopes.includes(scope));
    if (unknown.length > 0) throw new InvalidScopeError(`unsupported scope: ${unknown.join(' ')}`);
    const code = secret('code');
    this.codes.set(code, {
      clientId: client.client_id,
      scopes: requested.length > 0 ? requested : [...this.config.scopes],
      ...(params.resource ? { resource: params.resource.href } : {}),
      challenge: params.codeChallenge,
      redirectUri: params.redirectUri,
      expiresAt: nowSeconds() + CODE_LIFETIME_SECONDS,
    });
    this.stats.authorizations++;
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(302, target.href);
  }

  private pendingCode(client: OAuthClientInformationFull, code: string): PendingCode {
    const pending = this.codes.get(code);
    if (!pending || pending.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    return pending;
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string): Promise<string> {
    return this.pendingCode(client, authorizationCode).challenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string, _codeVerifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    const pending = this.pendingCode(client, authorizationCode);
    this.codes.delete(authorizationCode);
    if (pending.expiresAt <= nowSeconds()) throw new InvalidGrantError('authorization code expired');
    if (redirectUri !== undefined && redirectUri !== pending.redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
    if (resource && pending.resource && !sameResource(resource.href, pending.resource)) throw new InvalidTargetError('resource does not match the authorization request');
    this.stats.codeExchanges++;
    return this.issue({ clientId: pending.clientId, scopes: pending.scopes, resource: pending.resource ?? resource?.href }, 'code');
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    const refuse = (message: string): never => {
      this.stats.refusedRefreshes++;
      throw new InvalidGrantError(message);
    };
    if (this.settings.refuseRefresh) return refuse('refresh token revoked');
    const grant = this.refreshTokens.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) return refuse(this.rotatedRefreshTokens.has(refreshToken) ? 'refresh token already used (rotated)' : 'unknown refresh token');
    const narrowed = scopes?.filter((scope) => scope !== '');
    if (narrowed?.some((scope) => !grant.scopes.includes(scope))) throw new InvalidScopeError('scope exceeds the original grant');
    if (resource && grant.resource && !sameResource(resource.href, grant.resource)) throw new InvalidTargetError('resource does not match the original grant');
    this.refreshTokens.delete(refreshToken);
    this.rotatedRefreshTokens.add(refreshToken);
    this.stats.refreshes++;
    const granted = narrowed && narrowed.length > 0 ? narrowed : grant.scopes;
    return this.issue({ clientId: grant.clientId, scopes: granted, resource: grant.resource ?? resource?.href }, 'refresh');
  }

  private issue(grant: Grant, via: IssuedAccessToken['via']): OAuthTokens {
    const lifetime = this.settings.accessTokenLifetimeSeconds;
    const expiresAt = nowSeconds() + lifetime;
    const accessToken = secret('at');
    const refreshToken = secret('rt');
    const stored: Grant = { clientId: grant.clientId, scopes: grant.scopes, ...(grant.resource ? { resource: grant.resource } : {}) };
    this.accessTokens.set(accessToken, { ...stored, expiresAt });
    this.refreshTokens.set(refreshToken, stored);
    this.issued.push({ accessToken, via, expiresAt });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: lifetime, scope: grant.scopes.join(' '), refresh_token: refreshToken };
  }

  /** The MCP server's check of a bearer token: known, not expired (real clock), and meant for the MCP server. */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const reject = (message: string): never => {
      this.stats.rejectedBearers++;
      throw new InvalidTokenError(message);
    };
    const record = this.accessTokens.get(token);
    if (!record) return reject('unknown access token');
    if (record.expiresAt <= nowSeconds()) return reject('access token expired');
    // A token issued without a resource indicator is for the only resource this server protects.
    const audience = record.resource ?? this.config.resource;
    if (!sameResource(audience, this.config.resource)) return reject('token was issued for another resource');
    return { token, clientId: record.clientId, scopes: record.scopes, expiresAt: record.expiresAt, resource: new URL(audience) };
  }
}
