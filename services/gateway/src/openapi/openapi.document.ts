import { Injectable } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject, type ParameterObject } from '@nestjs/swagger';
import { cleanupOpenApiDoc } from 'nestjs-zod';
import { Identifiers } from '@packetagent/contracts';
import { SECURITY_SCHEMES } from '../access/access.decorators';
import { PROBLEM_CONTENT_TYPE } from '../http/problem';
import { SESSION_COOKIE, CSRF_HEADER } from '../sessions/session.cookie';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
  properties: {
    type: { type: 'string', description: 'urn:packetagent:problem:<code>' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', description: 'stable machine-readable error code' },
    requestId: { type: 'string', description: 'also in the x-request-id response header' },
    errors: {
      type: 'array',
      description: 'every issue found, each with the field it applies to: validation failures (400), refused commands (422 exec_refused) and host keys to confirm (409 host_key_unpinned, at acceptHostKey)',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    presentedHostKey: {
      type: 'string',
      pattern: '^SHA256:[A-Za-z0-9+/]{43}$',
      description: 'with 409 host_key_unpinned or host_key_changed: the fingerprint the computer presented; verify it on the host before sending it back as acceptHostKey',
    },
  },
};

function pathParameter(name: string): ParameterObject {
  return name === 'ws'
    ? { name, in: 'path', required: true, description: 'workspace id', schema: { type: 'string', pattern: Identifiers.workspace.source } }
    : { name, in: 'path', required: true, schema: { type: 'string' } };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/**
 * The OpenAPI 3.1 document of every controller registered in the app (the gateway's and any
 * other module's), built once at start-up. Every operation answers errors as problem+json.
 */
export function buildOpenApiDocument(app: INestApplication, options: { publicUrl?: string; version?: string }): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('PacketAgent API')
    .setDescription('Self-hosted runtime for autonomous workers. Errors are application/problem+json.')
    .setVersion(options.version ?? '1')
    .setOpenAPIVersion('3.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'an API key, "pa_<id>_<secret>"' }, SECURITY_SCHEMES.bearer)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'a PacketADE actor token, "pade_<id>_<secret>", for /api/v1/packetade only' }, SECURITY_SCHEMES.actorToken)
    .addCookieAuth(SESSION_COOKIE, { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'session from POST /api/v1/auth/login' }, SECURITY_SCHEMES.cookie)
    .addSecurity(SECURITY_SCHEMES.csrf, {
      type: 'apiKey',
      in: 'header',
      name: CSRF_HEADER,
      description: 'with the session cookie, required on POST, PUT, PATCH and DELETE: the csrfToken returned at login',
    });
  if (options.publicUrl) builder.addServer(options.publicUrl);
  const document = cleanupOpenApiDoc(SwaggerModule.createDocument(app, builder.build()), { version: '3.1' });
  document.openapi = '3.1.0';
  document.components = { ...document.components, schemas: { ...document.components?.schemas, Problem: PROBLEM_SCHEMA } };
  for (const [path, item] of Object.entries(document.paths)) {
    const templateParameters = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      // A path parameter no handler reads (`:ws` is read by the guard) must still be declared.
      const declared = new Set((operation.parameters ?? []).flatMap((parameter) => ('in' in parameter && parameter.in === 'path' ? [parameter.name] : [])));
      const missing = templateParameters.filter((name) => !declared.has(name)).map((name) => pathParameter(name));
      operation.parameters = [...missing, ...(operation.parameters ?? [])];
      operation.responses = {
        ...operation.responses,
        default: { description: 'an error', content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } },
      };
    }
  }
  return document;
}

/** Holds the document built by configureGatewayApp for the route that serves it. */
@Injectable()
export class OpenApiDocumentHolder {
  document: OpenAPIObject | null = null;
}
