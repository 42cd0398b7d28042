export const MCP_CONNECTIONS_ROUTES_OPTIONS = Symbol('MCP_CONNECTIONS_ROUTES_OPTIONS');

export interface McpConnectionsRoutesOptions {
  /** The gateway's externally visible base URL; without one the callback is the request's own origin. */
  publicUrl?: string;
  /**
   * How long beginning or completing a connection waits for the vault: it reaches the MCP
   * server and its authorization server (discovery, registration, the code exchange) first.
   */
  oauthReplyMs: number;
}

export const DEFAULT_MCP_CONNECTIONS_ROUTES_OPTIONS: McpConnectionsRoutesOptions = { oauthReplyMs: 25_000 };

/** Where the authorization server sends the operator's browser back, under the gateway's base URL. */
export const MCP_OAUTH_CALLBACK_PATH = '/api/v1/mcp/oauth/callback';
