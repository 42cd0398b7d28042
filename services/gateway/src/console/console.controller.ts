import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../access/access.decorators';
import { NotFoundError } from '../identity/errors';
import { ConsoleAssets, consoleCsp, isReservedPath } from './console-assets';

export const CONSOLE_ASSETS = Symbol('CONSOLE_ASSETS');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/**
 * The operations console at `/`: its files, and index.html for any other path so deep links
 * work. Registered as a wildcard, which the router tries after every static and parametric
 * route, so the API, /hooks, /healthz, /readyz and /metrics keep precedence; an unknown path
 * under them is still the API's problem+json 404.
 */
@ApiExcludeController()
@Controller()
export class ConsoleController {
  constructor(@Inject(CONSOLE_ASSETS) private readonly assets: ConsoleAssets) {}

  @Get('*')
  @Public()
  serve(@Req() request: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    const path = request.url;
    if (isReservedPath(path)) throw new NotFoundError(`no route for GET ${path.split('?')[0]}`);
    const answer = this.assets.answer(path, request.headers['accept-encoding']);
    reply.headers(SECURITY_HEADERS);
    switch (answer.kind) {
      case 'file':
        if (answer.encoding) reply.header('content-encoding', answer.encoding);
        if (answer.vary) reply.header('vary', 'accept-encoding');
        return reply
          .header('cache-control', answer.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
          .header('content-security-policy', consoleCsp(null))
          .type(answer.contentType)
          .send(answer.body);
      case 'index':
        // Always revalidated: it names the hashed files of the current build.
        return reply.header('cache-control', 'no-cache').header('content-security-policy', consoleCsp(answer.nonce)).type('text/html; charset=utf-8').send(answer.body);
      case 'missing-build':
        return reply.status(503).header('cache-control', 'no-store').header('content-security-policy', consoleCsp(null)).type('text/html; charset=utf-8').send(answer.body);
      case 'not-found':
        return reply.status(404).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('Not found\n');
    }
  }
}
