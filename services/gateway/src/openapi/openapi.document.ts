import { Injectable } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject, type ParameterObject, type ResponseObject } from '@nestjs/swagger';
import { cleanupOpenApiDoc } from 'nestjs-zod';
import { Identifiers } from '@packetagent/contracts';
import { SECURITY_SCHEMES } from '../access/access.decorators';
import { PROBLEM_CONTENT_TYPE } from '../http/problem';
import { SESSION_COOKIE, CSRF_HEADER } from '../sessions/session.cookie';
import { OPERATION_DESCRIPTIONS } from './operation-descriptions';
import { restoreZodTypeLists } from './zod-type-lists';

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
    errorCount: { type: 'integer', description: 'with errors, when more issues were found than are listed (the first 20): how many in all' },
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

/** Every tag an operation may carry, declared once at the document level. */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  Health: 'Liveness and readiness probes for orchestrators; no credential.',
  Metrics: 'Prometheus metrics of the process; no credential.',
  setup: 'First-run setup: the owner account, the first workspace and its first API key.',
  auth: 'Sign-in, sessions, TOTP and the identity behind a credential.',
  passkeys: 'WebAuthn passkeys: sign-in with a passkey and managing your own.',
  workspaces: 'Workspaces and membership.',
  'api-keys': 'API keys of a workspace, each with a role.',
  workers: 'Workers and their immutable definition versions.',
  deployments: 'Deployments of a worker version: triggers, overrides and their lifecycle.',
  runs: 'Runs: starting, reading, pausing, stopping, supervision and migration.',
  triggers: 'Alert and webhook ingress that starts runs.',
  attention: 'Approvals, questions and budget requests waiting on a person.',
  budgets: 'Budget use and the blocks an overspend puts on a scope.',
  credentials: 'Sealed credentials that tools use; values are never answered back.',
  audit: 'Verification of the event history and evidence bundles.',
  events: 'Run and workspace events, paged or as Server-Sent Events, and stored payloads.',
  packetade: 'PacketADE: signed packages deployed by pipelines with actor tokens, and their event feed.',
  operations: 'Read models for the operations console, eventually consistent with the event log.',
  notifications: 'Notification deliveries and the signed callback links they carry.',
  sandbox: 'Commands run in the sandbox: execs, their output and limits.',
  computers: 'Computers reached over SSH that commands run on.',
  mcp: 'MCP server connections and their OAuth flow.',
  templates: 'Worker templates to start a definition from.',
};

/**
 * Operations where an Idempotency-Key (header, or body field) repeated answers what the first
 * request created, with 200 instead of 201.
 */
const IDEMPOTENT_OPERATIONS = new Set([
  'post /api/v1/workspaces/{ws}/deployments',
  'post /api/v1/workspaces/{ws}/deployments/{id}/runs',
  'post /api/v1/packetade/deployments',
  'post /api/v1/packetade/deployments/{id}/runs',
]);

type Operation = NonNullable<OpenAPIObject['paths'][string]['get']>;

/** Who may call an operation, from the access metadata every route carries. */
function accessSentence(operation: Operation & { 'x-required-permission'?: string }): string {
  const schemes = new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));
  const permission = operation['x-required-permission'];
  if (permission) return `Callers need the \`${permission}\` permission in the workspace, with an API key or a session.`;
  if (schemes.size === 0) return 'Public: no credential is needed.';
  if (schemes.has(SECURITY_SCHEMES.actorToken) && schemes.size === 1) return 'Callers present a PacketADE actor token.';
  if (!schemes.has(SECURITY_SCHEMES.bearer)) return 'Only a signed-in session (cookie and CSRF token) may call it.';
  return 'Any authenticated caller, with an API key or a session.';
}

function describe(key: string, operation: Operation): void {
  const what = operation.description || OPERATION_DESCRIPTIONS[key] || operation.summary;
  const who = accessSentence(operation);
  operation.description = what ? `${what.replace(/\.?\s*$/, '.')} ${who}` : who;
}

function documentReplay(operation: Operation): void {
  const created = operation.responses['201'] as ResponseObject | undefined;
  operation.responses['200'] ??= {
    description: 'the same Idempotency-Key again: the answer the first request got, and nothing created twice',
    ...(created?.content ? { content: created.content } : {}),
  };
  const declared = (operation.parameters ?? []).some((parameter) => 'in' in parameter && parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key');
  if (!declared) {
    operation.parameters = [
      ...(operation.parameters ?? []),
      { name: 'Idempotency-Key', in: 'header', required: false, description: 'a key of the caller\'s choosing: repeated, it answers what the first request created', schema: { type: 'string', maxLength: 200 } },
    ];
  }
}

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
    // Opaque tokens, not JWTs: addBearerAuth would otherwise label them JWT.
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'pa_<id>_<secret>', description: 'an API key, "pa_<id>_<secret>": an opaque token' }, SECURITY_SCHEMES.bearer)
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'pade_<id>_<secret>', description: 'a PacketADE actor token, "pade_<id>_<secret>", for /api/v1/packetade only: an opaque token' },
      SECURITY_SCHEMES.actorToken,
    )
    .addCookieAuth(SESSION_COOKIE, { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'session from POST /api/v1/auth/login' }, SECURITY_SCHEMES.cookie)
    .addSecurity(SECURITY_SCHEMES.csrf, {
      type: 'apiKey',
      in: 'header',
      name: CSRF_HEADER,
      description: 'with the session cookie, required on POST, PUT, PATCH and DELETE: the csrfToken returned at login',
    });
  // Without a public URL the API is wherever this document was fetched from.
  if (options.publicUrl) builder.addServer(options.publicUrl, 'this installation');
  else builder.addServer('/', 'the server this document was fetched from');
  const scanned = SwaggerModule.createDocument(app, builder.build());
  restoreZodTypeLists(app, scanned);
  const document = cleanupOpenApiDoc(scanned, { version: '3.1' });
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
      describe(`${method.toUpperCase()} ${path}`, operation);
      if (IDEMPOTENT_OPERATIONS.has(`${method} ${path}`)) documentReplay(operation);
      operation.responses = {
        ...operation.responses,
        default: { description: 'an error', content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } },
      };
    }
  }
  const used = new Set(Object.values(document.paths).flatMap((item) => METHODS.flatMap((method) => item[method]?.tags ?? [])));
  document.tags = [...used].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }));
  return document;
}

/** Holds the document built by configureGatewayApp for the route that serves it. */
@Injectable()
export class OpenApiDocumentHolder {
  document: OpenAPIObject | null = null;
}
