import fastifyCookie from '@fastify/cookie';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { GatewayOptions } from './gateway.options';
import { ProblemFilter } from './http/problem.filter';
import { installRequestContext } from './http/request-context';
import { buildOpenApiDocument, OpenApiDocumentHolder } from './openapi/openapi.document';

/**
 * Wires the HTTP concerns that live on the Fastify instance rather than in a module: cookies,
 * request ids and the access log, problem+json for every error (Fastify's own included), and
 * the OpenAPI document of every controller registered so far. Call once, after
 * NestFactory.create and before listen.
 */
export async function configureGatewayApp(app: NestFastifyApplication, options: Pick<GatewayOptions, 'publicUrl'> & { apiVersion?: string } = {}): Promise<void> {
  await app.register(fastifyCookie);
  installRequestContext(app.getHttpAdapter().getInstance(), new Logger('access-log'));
  app.useGlobalFilters(new ProblemFilter());
  app.get(OpenApiDocumentHolder).document = buildOpenApiDocument(app, { publicUrl: options.publicUrl, version: options.apiVersion });
}
