import { createHash } from 'node:crypto';
import { Body, Controller, Get, Headers, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { NotificationsCommands, ValidationError } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../access/access.decorators';
import { CALLBACK_PAGE_CSP, callbackPage } from './callback-page';
import { CallbackResultDto, CallbackViewDto, UseCallbackBody } from './notifications.dto';

/** Answered as JSON, or as an HTML page to a client that accepts text/html: declared for the document only, since a serialiser would refuse the page. */
const CallbackView = CallbackViewDto.Output;

const TOKEN = /^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/;

function checkedToken(token: string): string {
  // Anything else cannot be a link this server signed: refused here, before any lookup.
  if (!TOKEN.test(token)) throw new ValidationError('not a remote-control link', [{ path: 'token', message: 'not a remote-control link' }]);
  return token;
}

/** A form posted as text/plain: `reason=...` on its own line. */
function formReason(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  const line = body.split(/\r?\n/).find((entry) => entry.startsWith('reason='));
  const reason = line?.slice('reason='.length).trim();
  return reason ? reason : undefined;
}

/**
 * Remote-control links sent in notifications. The link is the credential (signed, single-use,
 * expiring, bound to what it acts on), so these routes take no session or API key. GET shows
 * what the link would do and changes nothing; POST does it once: a replay is 409, an expired
 * link 410, a forged one 404.
 */
@ApiTags('notifications')
@Controller('api/v1/callbacks')
export class CallbacksController {
  constructor(private readonly bus: CommandBus) {}

  @Get(':token')
  @Public()
  @ApiOperation({ summary: 'What a remote-control link does', description: 'JSON by default; an HTML confirmation page when the client accepts text/html. Never acts.' })
  @ApiExtraModels(CallbackView)
  @ApiOkResponse({
    description: 'what the link does',
    content: { 'application/json': { schema: { $ref: getSchemaPath(CallbackView) } }, 'text/html': { schema: { type: 'string', description: 'a confirmation page' } } },
  })
  async inspect(@Param('token') token: string, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    const view = await this.bus.request(NotificationsCommands.inspectCallback, { token: checkedToken(token) });
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('x-content-type-options', 'nosniff');
    if (accept?.includes('text/html')) {
      reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', CALLBACK_PAGE_CSP);
      return callbackPage(view);
    }
    return view;
  }

  @Post(':token')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Use a remote-control link', description: 'Runs the operator command the link stands for, once. Body: optional `{"reason": "..."}` (JSON) or a text/plain form.' })
  @ZodResponse({ status: 200, type: CallbackResultDto })
  async use(@Param('token') token: string, @Body() body: unknown, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const checked = checkedToken(token);
    let reason: string | undefined;
    if (typeof body === 'string') reason = formReason(body);
    else if (body !== undefined && body !== null) {
      const parsed = UseCallbackBody.safeParse(body);
      if (!parsed.success) throw new ValidationError('invalid body', parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })));
      reason = parsed.data.reason;
    }
    const requestDigest = createHash('sha256').update(`${request.headers['user-agent'] ?? ''}\n${request.ip}`).digest('hex');
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    return this.bus.request(NotificationsCommands.executeCallback, { token: checked, ...(reason ? { reason } : {}), requestDigest }, { timeoutMs: 15_000 });
  }
}
