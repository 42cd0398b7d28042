import { Controller, Get, Inject, Logger, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { OAuthCommands, ValidationError } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { Public } from '../access/access.decorators';
import { PROBLEM_CONTENT_TYPE, type Problem } from '../http/problem';
import { requestIdOf } from '../http/request-context';
import { MCP_CONNECTIONS_ROUTES_OPTIONS, type McpConnectionsRoutesOptions } from './mcp-connections-routes.options';
import { CALLBACK_SECURITY_HEADERS, CONNECTED_PARAM, connectedPage, consoleLocation, failedPage, prefersJson, type CallbackPage } from './oauth-callback-page';
import { oauthProblem } from './oauth-problem';

/** RFC 6749 appendix A: state and code are printable ASCII (VSCHAR), error leaves out `"` and `\`. */
const VSCHAR = /^[\x20-\x7e]+$/;
const NQSCHAR = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;
// Control characters and lone surrogates: what an error description shown on a page may not carry.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A parameter given once; empty counts as absent (`?error=&state=...`). */
const once = (schema: z.ZodString) =>
  z.preprocess((value, ctx) => {
    if (Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'given more than once' });
      return z.NEVER;
    }
    return value === '' ? undefined : value;
  }, schema.optional());

/**
 * The authorization server's answer as the browser brings it back. Parameters this route does
 * not read (`iss`, `scope`, `session_state`...) are ignored; the description is only ever shown,
 * so it is cleaned rather than refused.
 */
const CallbackQuerySchema = z.object({
  state: once(z.string().max(512).regex(VSCHAR, 'printable ASCII')),
  code: once(z.string().max(4096).regex(VSCHAR, 'printable ASCII')),
  error: once(z.string().max(200).regex(NQSCHAR, 'an OAuth error code')),
  error_description: z.preprocess((value) => (Array.isArray(value) ? value[0] : value), z.string().optional()).transform((text) => {
    const cleaned = text?.slice(0, 1000).replace(UNPRINTABLE, ' ').trim();
    return cleaned ? cleaned : undefined;
  }),
});

function callbackRequestOf(query: unknown): z.output<typeof OAuthCommands.complete.request> {
  const parsed = CallbackQuerySchema.safeParse(query ?? {});
  if (!parsed.success) {
    throw new ValidationError(
      "the authorization server's answer is not valid",
      parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
    );
  }
  const { state, code, error, error_description: errorDescription } = parsed.data;
  if (state === undefined) {
    throw new ValidationError("the authorization server's answer is not valid", [
      { path: 'state', message: 'missing: this page completes a connection begun in the console or with `packetagent mcp connect`, through the link it gave' },
    ]);
  }
  return { state, ...(code !== undefined ? { code } : {}), ...(error !== undefined ? { error } : {}), ...(errorDescription !== undefined ? { errorDescription } : {}) };
}

/** The state and code are never repeated in an answer, whatever a message quotes. */
function redact(text: string, secrets: readonly string[]): string {
  return secrets.filter((secret) => secret.length >= 4).reduce((redacted, secret) => redacted.split(secret).join('[redacted]'), text);
}

/** The problem as answered: its detail and issues redacted. */
function redactedProblem(problem: Problem, secrets: readonly string[]): Problem['body'] {
  const { errors, ...body } = problem.body;
  return {
    ...body,
    detail: redact(body.detail, secrets),
    ...(errors ? { errors: errors.map((issue) => ({ path: issue.path, message: redact(issue.message, secrets) })) } : {}),
  };
}

/** What the operator reads of a refusal on the page: its detail, then each issue. */
function messageOf(body: Problem['body']): string {
  const issues = (body.errors ?? []).map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  return issues.length ? `${body.detail}: ${issues.join('; ')}` : body.detail;
}

const HTML = 'text/html; charset=utf-8';
const PROBLEM_SCHEMA = { $ref: '#/components/schemas/Problem' };

/**
 * Where the authorization server sends the operator's browser back with the code (or an error).
 * Public: no session or API key comes with a redirect from another site; the single-use `state`
 * the vault issued when the connection began is what authorises completing it.
 */
@ApiTags('mcp')
@Controller('api/v1/mcp/oauth')
export class McpOAuthCallbackController {
  private readonly logger = new Logger('http');
  private readonly oauthTimeout: { timeoutMs: number };

  constructor(
    private readonly bus: CommandBus,
    @Inject(MCP_CONNECTIONS_ROUTES_OPTIONS) options: McpConnectionsRoutesOptions,
  ) {
    this.oauthTimeout = { timeoutMs: options.oauthReplyMs };
  }

  @Get('callback')
  @Public()
  @ApiOperation({
    summary: "The OAuth redirect URI of MCP connections: completes the flow with the authorization server's answer",
    description:
      'Opened by the operator\'s browser, redirected here by the authorization server; not called directly. The vault exchanges the code for tokens (once: the state is single-use and lasts ten minutes) ' +
      `and stores them as a new version of the credential. A flow begun with \`returnTo\` answers 303 to that console page with \`${CONNECTED_PARAM}=<credential>\` added; ` +
      'one without answers a page saying the window may be closed. A failure answers 400: problem+json when Accept prefers JSON, a page otherwise. Neither ever repeats the code or state.',
  })
  @ApiQuery({ name: 'state', required: false, description: 'the state the vault issued when the connection began', schema: { type: 'string', maxLength: 512 } })
  @ApiQuery({ name: 'code', required: false, description: 'the authorization code', schema: { type: 'string', maxLength: 4096 } })
  @ApiQuery({ name: 'error', required: false, description: 'the authorization server\'s error code (access_denied...): the flow ends without a connection', schema: { type: 'string', maxLength: 200 } })
  @ApiQuery({ name: 'error_description', required: false, description: 'its explanation, shown to the operator', schema: { type: 'string' } })
  @ApiProduces('text/html', PROBLEM_CONTENT_TYPE)
  @ApiResponse({ status: 200, description: 'connected; the flow named no console page to return to', content: { 'text/html': { schema: { type: 'string' } } } })
  @ApiResponse({
    status: 303,
    description: `connected; back to the console page the flow named, with \`${CONNECTED_PARAM}=<credential>\` in its query`,
    headers: { Location: { description: 'the console page', schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 400,
    description: 'oauth_flow_unknown (unknown, used or expired state), oauth_authorization_denied (the authorization server answered an error), oauth_exchange_failed, or validation_failed (no state)',
    content: { 'text/html': { schema: { type: 'string' } }, [PROBLEM_CONTENT_TYPE]: { schema: PROBLEM_SCHEMA } },
  })
  async callback(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    void reply.headers(CALLBACK_SECURITY_HEADERS);
    const secrets: string[] = [];
    try {
      const completion = callbackRequestOf(request.query);
      secrets.push(completion.state, ...(completion.code !== undefined ? [completion.code] : []));
      const completed = await this.bus.request(OAuthCommands.complete, completion, this.oauthTimeout);
      const location = consoleLocation(completed.returnTo, completed.connection.credential);
      if (location !== null) {
        await reply.status(303).header('location', location).send();
        return;
      }
      await this.page(reply, 200, connectedPage(completed.connection.credential, completed.connection.resource));
    } catch (error) {
      await this.refuse(request, reply, error, secrets);
    }
  }

  private async refuse(request: FastifyRequest, reply: FastifyReply, error: unknown, secrets: readonly string[]): Promise<void> {
    const requestId = requestIdOf(request);
    const problem = oauthProblem(error, requestId);
    if (problem.cause !== undefined) {
      const cause = problem.cause;
      this.logger.error(`request=${requestId} GET ${request.routeOptions.url ?? '(no route)'} failed: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`);
    }
    if (reply.sent) return;
    void reply.headers(problem.headers);
    const body = redactedProblem(problem, secrets);
    if (prefersJson(request.headers.accept)) {
      await reply.status(problem.status).header('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`).send(JSON.stringify(body));
      return;
    }
    await this.page(reply, problem.status, failedPage(messageOf(body), requestId));
  }

  private async page(reply: FastifyReply, status: number, page: CallbackPage): Promise<void> {
    await reply.status(status).header('content-security-policy', page.csp).header('content-type', HTML).send(page.html);
  }
}
