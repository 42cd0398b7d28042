import { Body, Controller, Get, HttpCode, Inject, Post, Req, UseFilters } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyRequest } from 'fastify';
import { OAuthCommands, ValidationError } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { PROBLEM_CONTENT_TYPE } from '../http/problem';
import { BeginConnectionAnswerDto, BeginConnectionBodyDto, ConnectionListDto } from './mcp-connections.dto';
import { MCP_CONNECTIONS_ROUTES_OPTIONS, MCP_OAUTH_CALLBACK_PATH, type McpConnectionsRoutesOptions } from './mcp-connections-routes.options';
import { OAuthProblemFilter } from './oauth-problem';

/** A host name or IP address (IPv6 in brackets), with an optional port: what a Host header may carry. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

const ProblemResponse = (status: number, description: string) =>
  ApiResponse({ status, description, content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } });

/**
 * The callback the authorization server redirects to: under the configured public URL, else
 * under the origin the request came in on (the address the operator's browser reaches).
 */
export function callbackUrl(publicUrl: string | undefined, request: Pick<FastifyRequest, 'protocol' | 'host'>): string {
  if (publicUrl) {
    // The public URL may carry a path prefix (a reverse proxy's); never a query or fragment.
    const base = new URL(publicUrl);
    return `${base.origin}${base.pathname.replace(/\/+$/, '')}${MCP_OAUTH_CALLBACK_PATH}`;
  }
  const refused = () =>
    new ValidationError('the callback URL cannot be made from this request', [
      { path: 'host', message: "the Host header is not a host name with an optional port; configure the gateway's public URL (PACKETAGENT_PUBLIC_URL)" },
    ]);
  if (!HOST.test(request.host) || (request.protocol !== 'http' && request.protocol !== 'https')) throw refused();
  try {
    return `${new URL(`${request.protocol}://${request.host}`).origin}${MCP_OAUTH_CALLBACK_PATH}`;
  } catch {
    // A port past 65535, a host name the URL parser will not take.
    throw refused();
  }
}

/**
 * OAuth connections of the workspace's MCP servers, owned by the vault: beginning one answers
 * the URL the operator opens to consent; the authorization server then sends the browser to
 * the public callback, which completes it. Listing shows how each connection stands, never a token.
 */
@ApiTags('mcp')
@Controller('api/v1/workspaces/:ws/mcp/connections')
@UseFilters(OAuthProblemFilter)
export class McpConnectionsController {
  private readonly publicUrl: string | undefined;
  private readonly oauthTimeout: { timeoutMs: number };

  constructor(
    private readonly bus: CommandBus,
    @Inject(MCP_CONNECTIONS_ROUTES_OPTIONS) options: McpConnectionsRoutesOptions,
  ) {
    this.publicUrl = options.publicUrl;
    this.oauthTimeout = { timeoutMs: options.oauthReplyMs };
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('admin')
  @ApiOperation({
    summary: 'Begin connecting an MCP server that authorizes with OAuth: answers the URL to open in a browser',
    description:
      "The vault discovers the server's authorization server (RFC 9728, RFC 8414), registers a client when no `oauth.clientId` is given (RFC 7591), and keeps the PKCE verifier for ten minutes. " +
      `Opening \`authorizationUrl\` asks the operator to consent; the authorization server then redirects to \`${MCP_OAUTH_CALLBACK_PATH}\` under the gateway's public URL, which stores the tokens as the credential \`oauth.credential\`. ` +
      'Nothing is stored before then. A version whose servers use OAuth can be created only once they are connected: their tools are listed with the token.',
  })
  @ZodResponse({ status: 201, type: BeginConnectionAnswerDto })
  @ProblemResponse(400, 'validation_failed: the URL is not http(s), the credential name, a scope or the client id is malformed, or returnTo is not a path of the console')
  @ProblemResponse(422, 'oauth_discovery_failed (the server publishes no usable authorization server metadata), oauth_client_required (no dynamic registration is offered: give oauth.clientId) or oauth_registration_failed')
  @ProblemResponse(503, 'command_unavailable or command_timeout: the vault did not answer')
  async begin(@Principal() who: WorkspacePrincipal, @Body() body: BeginConnectionBodyDto, @Req() request: FastifyRequest) {
    const redirectUri = callbackUrl(this.publicUrl, request);
    const started = await this.bus.request(
      OAuthCommands.begin,
      { workspaceId: who.workspaceId, resource: body.url, oauth: body.oauth, redirectUri, ...(body.returnTo !== undefined ? { returnTo: body.returnTo } : {}), actor: who.actor },
      this.oauthTimeout,
    );
    return {
      authorizationUrl: started.authorizationUrl,
      expiresAt: started.expiresAt,
      credential: body.oauth.credential,
      issuer: started.issuer,
      clientId: started.clientId,
      registered: started.registered,
    };
  }

  @Get()
  @RequirePermission('inspect')
  @ApiOperation({
    summary: "The workspace's OAuth connections: for each credential its resource, issuer, client, state and when its token expires, never a token",
    description:
      '`state` is `connected`, or `reconnect_required` with the `reason` the authorization server gave the last refresh: an operator has to connect it again. ' +
      '`version` is the credential version the connection was stored as: each connection made is a new one.',
  })
  @ZodResponse({ status: 200, type: ConnectionListDto })
  @ProblemResponse(503, 'command_unavailable or command_timeout: the vault did not answer')
  list(@Principal() who: WorkspacePrincipal) {
    return this.bus.request(OAuthCommands.connections, { workspaceId: who.workspaceId });
  }
}
