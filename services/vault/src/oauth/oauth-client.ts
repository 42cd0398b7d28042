import { discoverOAuthServerInfo, exchangeAuthorization, refreshAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthClientInformationFull, OAuthProtectedResourceMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { oauthResourceKey } from '@packetagent/contracts';
import { checkedFetchLike } from '@packetagent/tools';
import { OAuthDiscoveryFailedError, OAuthRegistrationFailedError } from './oauth.errors';

export interface OAuthClientOptions {
  /** `host:port` pairs that may resolve to private addresses (the operator's allowlist). */
  allowPrivate: readonly string[];
  timeoutMs: number;
}

export interface DiscoveredServer {
  issuer: string;
  metadata: AuthorizationServerMetadata;
  resourceMetadata: OAuthProtectedResourceMetadata | null;
  /** What is sent as `resource` (RFC 8707): the server's published resource, or its URL. */
  resourceIndicator: string;
}

const MAX_ANSWER_BYTES = 1024 * 1024;

function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}

/**
 * The OAuth 2.1 client steps, as the MCP SDK implements them, over the checked network client:
 * the authorization server and its metadata are reached like any destination a tool calls.
 */
export class OAuthClient {
  private readonly fetchFn;

  constructor(options: OAuthClientOptions) {
    this.fetchFn = checkedFetchLike({ allowPrivate: options.allowPrivate, maxResponseBytes: MAX_ANSWER_BYTES, timeoutMs: options.timeoutMs });
  }

  /** RFC 9728 protected resource metadata, then RFC 8414 (or OpenID) metadata of its authorization server. */
  async discover(resource: string): Promise<DiscoveredServer> {
    let info;
    try {
      info = await discoverOAuthServerInfo(resource, { fetchFn: this.fetchFn });
    } catch (error) {
      throw new OAuthDiscoveryFailedError(`could not discover how ${resource} is authorized: ${reasonOf(error)}`, { cause: error });
    }
    const metadata = info.authorizationServerMetadata;
    if (!metadata) throw new OAuthDiscoveryFailedError(`${info.authorizationServerUrl} publishes no OAuth authorization server metadata (RFC 8414) for ${resource}`);
    if (!metadata.code_challenge_methods_supported?.includes('S256')) {
      throw new OAuthDiscoveryFailedError(`the authorization server ${metadata.issuer} does not offer PKCE with S256, which OAuth 2.1 requires`);
    }
    const published = info.resourceMetadata?.resource ? String(info.resourceMetadata.resource) : null;
    if (published && !oauthResourceKey(resource).startsWith(oauthResourceKey(published))) {
      throw new OAuthDiscoveryFailedError(`${resource} publishes protected resource metadata for another resource (${published})`);
    }
    return { issuer: info.authorizationServerUrl, metadata, resourceMetadata: info.resourceMetadata ?? null, resourceIndicator: published ?? resource };
  }

  async register(server: DiscoveredServer, redirectUri: string, scope: string | undefined): Promise<OAuthClientInformationFull> {
    try {
      return await registerClient(server.issuer, {
        metadata: server.metadata,
        clientMetadata: {
          client_name: 'PacketAgent',
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          ...(scope ? { scope } : {}),
        },
        ...(scope ? { scope } : {}),
        fetchFn: this.fetchFn,
      });
    } catch (error) {
      throw new OAuthRegistrationFailedError(`the authorization server ${server.issuer} refused to register a client: ${reasonOf(error)}`, { cause: error });
    }
  }

  start(server: DiscoveredServer, client: OAuthClientInformationFull, options: { redirectUri: string; scope: string | undefined; state: string }): Promise<{ authorizationUrl: URL; codeVerifier: string }> {
    return startAuthorization(server.issuer, {
      metadata: server.metadata,
      clientInformation: client,
      redirectUrl: options.redirectUri,
      state: options.state,
      resource: server.resourceIndicator,
      ...(options.scope ? { scope: options.scope } : {}),
    });
  }

  exchange(
    flow: { issuer: string; metadata: AuthorizationServerMetadata; client: OAuthClientInformationFull; resourceIndicator: string; redirectUri: string },
    code: string,
    codeVerifier: string,
  ): Promise<OAuthTokens> {
    return exchangeAuthorization(flow.issuer, {
      metadata: flow.metadata,
      clientInformation: flow.client,
      authorizationCode: code,
      codeVerifier,
      redirectUri: flow.redirectUri,
      resource: flow.resourceIndicator,
      fetchFn: this.fetchFn,
    });
  }

  refresh(connection: { issuer: string; metadata: AuthorizationServerMetadata; client: OAuthClientInformationFull; resourceIndicator: string | null }, refreshToken: string): Promise<OAuthTokens> {
    return refreshAuthorization(connection.issuer, {
      metadata: connection.metadata,
      clientInformation: connection.client,
      refreshToken,
      ...(connection.resourceIndicator ? { resource: connection.resourceIndicator } : {}),
      fetchFn: this.fetchFn,
    });
  }
}
