import { z } from 'zod';
import { defineCommand } from '../commands';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { Identifiers } from '../envelope';
import { McpOAuthSchema } from '../sandbox/mcp.v1';
import { SealedCredentialSchema } from './sealed-credential';
import { CredentialNameSchema } from './vault.events.v1';

/**
 * OAuth 2.1 connections to remote MCP servers, owned by the vault: it runs the authorization
 * code flow with PKCE (registering a client dynamically where the authorization server offers
 * it), keeps the tokens as a credential of kind `oauth`, and refreshes them before they expire,
 * one refresh at a time per connection. Tokens leave the vault only as an access token, sealed,
 * for the resource the connection was made for.
 */

const workspaceId = z.string().regex(Identifiers.workspace);
const httpUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** How a connection stands: usable, or waiting for an operator to connect it again (with why). */
export const OAuthConnectionStateSchema = z.enum(['connected', 'reconnect_required']);

/** What anyone who may inspect the workspace learns about a connection: never a token. */
export const OAuthConnectionSchema = z.object({
  credential: CredentialNameSchema,
  version: z.number().int().positive(),
  /** The protected resource (the MCP server's URL) the tokens are for. */
  resource: z.string(),
  issuer: z.string(),
  clientId: z.string(),
  scope: z.string().nullable(),
  state: OAuthConnectionStateSchema,
  /** Why the connection needs an operator (the authorization server's answer to the last refresh). */
  reason: z.string().nullable(),
  /** When the current access token expires, when the server said. */
  expiresAt: z.iso.datetime().nullable(),
  refreshable: z.boolean(),
  connectedAt: z.iso.datetime(),
  connectedBy: ActorSchema,
  /** When the vault last refreshed the tokens, if it has since the connection was made. */
  refreshedAt: z.iso.datetime().nullable(),
});
export type OAuthConnection = z.infer<typeof OAuthConnectionSchema>;

/**
 * Where the operator is sent back once connected: a path on this server (the console is served
 * at its root), never another host's (`//host`) and never the API's; the gateway checks it again
 * against what it serves before it redirects.
 */
export const OAuthReturnToSchema = z
  .string()
  .max(1024)
  .regex(/^\/(?![/\\])(?!api(?:[/?]|$))[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$/, 'a path of the console, such as /w/<workspace>/workers/<worker>');

export const OAuthCommands = {
  /**
   * Discovers the server's authorization server (RFC 9728, then RFC 8414), registers a client
   * when none is given (RFC 7591), and answers the URL the operator opens to consent. The PKCE
   * verifier stays in the vault, encrypted, for ten minutes; nothing is stored as a credential yet.
   */
  begin: defineCommand(
    'vault.oauth.begin',
    z.strictObject({
      workspaceId,
      resource: httpUrl,
      oauth: McpOAuthSchema,
      /** The gateway's callback, registered with the client and sent as redirect_uri. */
      redirectUri: httpUrl,
      returnTo: OAuthReturnToSchema.optional(),
      actor: ActorSchema,
    }),
    z.object({ authorizationUrl: z.string(), expiresAt: z.iso.datetime(), issuer: z.string(), clientId: z.string(), registered: z.boolean() }),
  ),
  /**
   * The authorization server's answer, redeemed once: the code exchanged (with the verifier) for
   * tokens stored as a new version of the credential. An `error` from the server ends the flow.
   */
  complete: defineCommand(
    'vault.oauth.complete',
    z.strictObject({
      state: z.string().min(1).max(512),
      code: z.string().min(1).max(4096).optional(),
      error: z.string().max(200).optional(),
      errorDescription: z.string().max(1000).optional(),
    }),
    z.object({ workspaceId, connection: OAuthConnectionSchema, returnTo: z.string().nullable() }),
  ),
  connections: defineCommand('vault.oauth.connections', z.strictObject({ workspaceId }), z.object({ items: z.array(OAuthConnectionSchema) })),
  /**
   * An access token for listing a server's tools when a version is created: only for the
   * resource the connection was made for, sealed to the caller's key. Runs get theirs through
   * policy's credential grants instead (`vault.resolve`, with the same audience check).
   */
  token: defineCommand(
    'vault.oauth.token',
    z.strictObject({ workspaceId, credential: CredentialNameSchema, audience: httpUrl, recipientPublicKey: z.string().min(1).max(200) }),
    z.object({ sealed: SealedCredentialSchema, expiresAt: z.iso.datetime().nullable() }),
  ),
} as const;

export const OAuthErrorCodes = {
  /** The server publishes no usable authorization server metadata. */
  discoveryFailed: 'oauth_discovery_failed',
  /** No dynamic client registration is offered and the definition names no clientId. */
  clientRequired: 'oauth_client_required',
  registrationFailed: 'oauth_registration_failed',
  /** The state is unknown, used or past its ten minutes. */
  flowUnknown: 'oauth_flow_unknown',
  /** The authorization server answered the consent with an error (the operator declined, ...). */
  authorizationDenied: 'oauth_authorization_denied',
  exchangeFailed: 'oauth_exchange_failed',
  /** The connection cannot give a token until an operator connects it again; the message says why. */
  reconnectRequired: 'oauth_reconnect_required',
  /** The token was asked for another resource than the one the connection was made for. */
  audienceMismatch: 'oauth_audience_mismatch',
  /** The credential is a plain secret, not a connection. */
  notAConnection: 'oauth_not_a_connection',
} as const;

/**
 * Where a resource indicator is compared: scheme, host and port lower-cased, the path without a
 * trailing slash, no query or fragment (RFC 8707 resources are absolute URIs without fragments).
 */
export function oauthResourceKey(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, '');
  return `${parsed.protocol}//${parsed.host}${path}`.toLowerCase();
}
