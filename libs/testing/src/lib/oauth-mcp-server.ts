import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryOAuthProvider, type IssuedAccessToken, type OAuthPeerSettings, type OAuthPeerStats } from './oauth/in-memory-oauth-provider';
import { oauthTestToolServer } from './oauth/oauth-test-tools';

export type { IssuedAccessToken, OAuthPeerStats } from './oauth/in-memory-oauth-provider';

export interface OAuthMcpServerOptions {
  /** Seconds an access token lives (expires_in). Default 3600. Changeable later through `accessTokenLifetimeSeconds`; 0 or less issues tokens that are already expired. */
  accessTokenLifetimeSeconds?: number;
  /** Offer RFC 7591 dynamic client registration (registration_endpoint). Default true. */
  dynamicRegistration?: boolean;
  /** Scopes the server supports (scopes_supported); default ['tools']. */
  scopes?: string[];
}

export interface OAuthMcpServer {
  /** The MCP endpoint, http://127.0.0.1:PORT/mcp — also the protected resource (RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp and /.well-known/oauth-protected-resource). */
  url: string;
  /** The authorization server's issuer, http://127.0.0.1:PORT/ (same origin as the MCP endpoint). */
  issuer: string;
  /** `127.0.0.1:<port>`, for allowlists. */
  host: string;
  /** Lifetime of the access tokens issued from now on; 0 or less makes them expired on issue. */
  accessTokenLifetimeSeconds: number;
  /** When true, every refresh_token grant fails with invalid_grant ("refresh token revoked"); the refresh tokens stay valid for when it is false again. */
  refuseRefresh: boolean;
  /** Registers a public client (token_endpoint_auth_method none) ahead of time, for the case without dynamic registration; returns its client_id. */
  preRegister(redirectUri: string): string;
  /** Counters for assertions (live). */
  readonly stats: OAuthPeerStats;
  /** The access token each MCP tools/call was made with, in order. */
  readonly callTokens: string[];
  /** Access tokens issued, in order, with the grant that issued them; expiresAt in seconds since the epoch. */
  readonly issued: IssuedAccessToken[];
  close(): Promise<void>;
}

/** The parts of the SDK's Express app (typed loosely by the SDK) this server uses. */
type AuthenticatedRequest = IncomingMessage & { auth?: AuthInfo; body?: unknown };
type JsonResponse = ServerResponse & { json(body: unknown): void };
type Handler = (request: AuthenticatedRequest, response: JsonResponse, next: (error?: unknown) => void) => void;
interface McpExpressApp {
  (request: IncomingMessage, response: ServerResponse): void;
  use(handler: unknown): void;
  get(path: string, handler: Handler): void;
  all(path: string, ...handlers: unknown[]): void;
}

const toolCallsIn = (body: unknown): number => (Array.isArray(body) ? body : [body]).filter((message) => isJSONRPCRequest(message) && message.method === 'tools/call').length;

/**
 * An OAuth 2.1 authorization server and a Streamable HTTP MCP server that requires its bearer tokens, both on one
 * loopback port and both built from the SDK's own server pieces (mcpAuthRouter, requireBearerAuth, StreamableHTTPServerTransport).
 * The authorization endpoint consents at once: it redirects (302) to the client's redirect_uri with `code` and `state`.
 */
export async function startOAuthMcpServer(options: OAuthMcpServerOptions = {}): Promise<OAuthMcpServer> {
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  const issuerUrl = new URL(`http://127.0.0.1:${port}`);
  const resourceUrl = new URL('/mcp', issuerUrl);
  const scopes = options.scopes ?? ['tools'];
  const settings: OAuthPeerSettings = { accessTokenLifetimeSeconds: options.accessTokenLifetimeSeconds ?? 3600, refuseRefresh: false };
  const provider = new InMemoryOAuthProvider(settings, { dynamicRegistration: options.dynamicRegistration ?? true, scopes, resource: resourceUrl.href });
  const callTokens: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  const resourceName = 'PacketAgent OAuth test MCP server';
  const app: McpExpressApp = createMcpExpressApp({ host: '127.0.0.1' });
  // Every request comes from the same loopback address: the SDK's rate limits would refuse a busy spec.
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      scopesSupported: scopes,
      resourceServerUrl: resourceUrl,
      resourceName,
      authorizationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
    }),
  );
  // The router serves the path-specific RFC 9728 document; clients that probe the origin's root get the same one.
  const resourceMetadata: OAuthProtectedResourceMetadata = { resource: resourceUrl.href, authorization_servers: [issuerUrl.href], scopes_supported: scopes, resource_name: resourceName };
  app.get('/.well-known/oauth-protected-resource', (_request, response) => response.json(resourceMetadata));

  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(resourceUrl), expectedResource: resourceUrl });
  const mcp: Handler = (request, response) => {
    void (async () => {
      const body = request.method === 'POST' ? request.body : undefined;
      const id = request.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport && request.method === 'POST' && isInitializeRequest(body)) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
        };
        await oauthTestToolServer().connect(created);
        transport = created;
      }
      if (!transport) return void response.writeHead(404).end('no such session');
      const calls = toolCallsIn(body);
      for (let call = 0; call < calls; call++) callTokens.push(request.auth?.token ?? '');
      provider.stats.toolCalls += calls;
      await transport.handleRequest(request, response, body);
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  };
  app.all('/mcp', bearer, mcp);
  http.on('request', app);

  return {
    url: resourceUrl.href,
    issuer: issuerUrl.href,
    host: `127.0.0.1:${port}`,
    get accessTokenLifetimeSeconds() {
      return settings.accessTokenLifetimeSeconds;
    },
    set accessTokenLifetimeSeconds(seconds: number) {
      settings.accessTokenLifetimeSeconds = seconds;
    },
    get refuseRefresh() {
      return settings.refuseRefresh;
    },
    set refuseRefresh(refuse: boolean) {
      settings.refuseRefresh = refuse;
    },
    preRegister: (redirectUri) => provider.preRegister(redirectUri),
    stats: provider.stats,
    callTokens,
    issued: provider.issued,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close().catch(() => undefined)));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
