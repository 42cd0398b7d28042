import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { CredentialNameSchema, jsonIssues, McpHttpServerFields, McpOAuthSchema, OAuthCommands, OAuthReturnToSchema } from '@packetagent/contracts';

/**
 * POST .../mcp/connections: the MCP server to connect and its `oauth` exactly as a definition
 * declares them. Strings Postgres could not store (NUL, lone surrogates) are refused here.
 */
export const BeginConnectionBody = z
  .strictObject({
    url: McpHttpServerFields.shape.url.describe('The MCP server (Streamable HTTP endpoint) the tokens are for: the protected resource.'),
    oauth: McpOAuthSchema.describe("The server's `oauth`, as the worker definition declares it: the credential to store the connection in, the scopes, a pre-registered client."),
    returnTo: OAuthReturnToSchema.optional().describe(
      'A path of the console to send the operator back to once connected, with `mcp_connected=<credential>` added to its query; without it the callback answers a page saying the window may be closed.',
    ),
  })
  .superRefine((body, ctx) => {
    for (const issue of jsonIssues(body)) ctx.addIssue({ code: 'custom', path: issue.path.replace(/\[(\d+)\]/g, '.$1').split('.').filter(Boolean), message: issue.message });
  });
export class BeginConnectionBodyDto extends createZodDto(BeginConnectionBody) {}

export const BeginConnectionAnswer = OAuthCommands.begin.response.extend({
  authorizationUrl: z.string().describe('Open this in a browser to consent; the authorization server then sends the browser to the callback.'),
  expiresAt: z.iso.datetime().describe('The flow must be completed before this (ten minutes).'),
  credential: CredentialNameSchema.describe('The credential the connection is stored in once completed.'),
  issuer: z.string().describe('The authorization server discovered for the MCP server.'),
  clientId: z.string().describe('The OAuth client the flow runs as.'),
  registered: z.boolean().describe('The client was registered dynamically for this flow (RFC 7591), rather than given.'),
});
export class BeginConnectionAnswerDto extends createZodDto(BeginConnectionAnswer) {}

export class ConnectionListDto extends createZodDto(OAuthCommands.connections.response) {}
