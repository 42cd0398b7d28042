import { Controller, Headers, HttpCode, Param, Post, Req, type RawBodyRequest } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyRequest } from 'fastify';
import { DomainError, IntakeCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { Public } from '../access/access.decorators';
import { ActivationDto } from './control-plane-replies.dto';

export const WEBHOOK_SIGNATURE_HEADER = 'x-packetagent-signature';
export const WEBHOOK_MAX_BODY_BYTES = 256 * 1024;

class WebhookRefusedError extends DomainError {
  constructor(
    readonly code: 'webhook_signature_invalid' | 'payload_too_large',
    message: string,
  ) {
    super(message);
  }
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` */
export function parseSignatureHeader(header: string | undefined): { timestamp: string; signature: string } {
  const parts = new Map((header ?? '').split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const timestamp = parts.get('t');
  const signature = parts.get('v1');
  if (!timestamp || !signature) {
    throw new WebhookRefusedError('webhook_signature_invalid', `missing or malformed ${WEBHOOK_SIGNATURE_HEADER} header (expected t=<unix seconds>,v1=<hex>)`);
  }
  return { timestamp, signature };
}

/**
 * Webhook ingress. Authentication is the trigger's HMAC signature, checked by intake (which
 * holds the secret) over the exact bytes received; the answer is 202 with the activation.
 */
@ApiTags('triggers')
@Controller('hooks')
export class HooksController {
  constructor(private readonly bus: CommandBus) {}

  @Post(':triggerId')
  @HttpCode(202)
  @Public()
  @ApiHeader({ name: WEBHOOK_SIGNATURE_HEADER, required: true, description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">' })
  @ZodResponse({ status: 202, type: ActivationDto })
  deliver(
    @Param('triggerId') triggerId: string,
    @Headers(WEBHOOK_SIGNATURE_HEADER) header: string | undefined,
    @Headers('content-type') contentType: string | undefined,
    @Req() request: RawBodyRequest<FastifyRequest>,
  ) {
    const { timestamp, signature } = parseSignatureHeader(header);
    const body = rawBodyOf(request);
    if (body.length > WEBHOOK_MAX_BODY_BYTES) {
      throw new WebhookRefusedError('payload_too_large', `webhook bodies are limited to ${WEBHOOK_MAX_BODY_BYTES} bytes`);
    }
    return this.bus.request(IntakeCommands.deliverWebhook, {
      triggerId: triggerId.slice(0, 200),
      timestamp: timestamp.slice(0, 20),
      signature: signature.slice(0, 200),
      bodyBase64: body.toString('base64'),
      contentType: contentType?.slice(0, 200) ?? null,
      receivedAt: new Date().toISOString(),
    });
  }
}

/**
 * The exact bytes received: Nest keeps them for JSON (rawBody: true); Fastify's text parser
 * hands over the text, whose UTF-8 bytes are the body. Other media types are refused with 415.
 */
function rawBodyOf(request: RawBodyRequest<FastifyRequest>): Buffer {
  if (request.rawBody) return request.rawBody;
  return typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : Buffer.alloc(0);
}
