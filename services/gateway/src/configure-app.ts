import fastifyCookie from '@fastify/cookie';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GatewayOptions } from './gateway.options';
import { installFrameworkErrorAnswers } from './http/framework-errors';
import { ProblemFilter } from './http/problem.filter';
import { installRequestContext } from './http/request-context';
import { installRequestHygiene } from './http/request-hygiene';
import { installSecurityHeaders } from './http/security-headers';
import { buildOpenApiDocument, OpenApiDocumentHolder } from './openapi/openapi.document';

/**
 * Wires the HTTP concerns that live on the Fastify instance rather than in a module: cookies,
 * request ids and the access log, the boundary checks every request passes (charset, text,
 * nesting, cursors), security headers on every response, problem+json for every error
 * (Fastify's and Node's own included), and the OpenAPI document of every controller registered
 * so far. Call once, after NestFactory.create and before listen.
 */
export async function configureGatewayApp(app: NestFastifyApplication, options: Pick<GatewayOptions, 'publicUrl'> & { apiVersion?: string } = {}): Promise<void> {
  await app.register(fastifyCookie);
  const fastify = app.getHttpAdapter().getInstance();
  installRequestContext(fastify, new Logger('access-log'));
  installFrameworkErrorAnswers(fastify);
  installRequestHygiene(fastify);
  installSecurityHeaders(fastify);
  app.useGlobalFilters(new ProblemFilter());
  app.get(OpenApiDocumentHolder).document = buildOpenApiDocument(app, { publicUrl: options.publicUrl, version: options.apiVersion });
}
