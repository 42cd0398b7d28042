import { CREDENTIAL_NAME_PATTERN, KNOWN_TOOLS, type JsonObject, type JsonValue } from '@packetagent/contracts';
import { z } from 'zod';
import { ToolFailure } from '../../errors';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { abortable, deadline } from '../../internal/deadline';
import { canonicalUrl, checkHttpUrl, displayUrl, HEADER_NAME, isSensitiveHeader, isTextual, shownHeaders, UNSAFE_HEADER_VALUE } from '../../internal/http-shared';
import { jsonValue, toParameters } from '../../internal/schema';
import { redactBulk, truncateText } from '../../internal/text';
import { checkedDestination } from '../../net/destination';
import { exchange } from '../../net/http-client';
import type { ToolContext, ToolOutcome, ToolsConfig } from '../../tool.types';

const METHODS = KNOWN_TOOLS.http_fetch.verbs;
const MUTATING: readonly string[] = KNOWN_TOOLS.http_fetch.mutatingVerbs;
const HTTP_IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** Set by the tool itself; a model-supplied value would change what was authorised or framed. */
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer',
  'proxy-authorization', 'proxy-connection', 'idempotency-key', 'accept-encoding', 'expect',
]);

const headerName = z.string().regex(HEADER_NAME, 'not a valid header name');

const AuthSchema = z
  .strictObject({
    credential: z.string().regex(CREDENTIAL_NAME_PATTERN, 'not a credential name').describe('Name of the credential to send (never its value).'),
    scheme: z.enum(['bearer', 'basic', 'header']).describe('bearer: Authorization: Bearer <value>; basic: Authorization: Basic base64(<value>) where the value is user:password; header: <header>: <value>.'),
    header: headerName.optional().describe('The header that carries the credential when scheme is "header".'),
  })
  .superRefine((auth, ctx) => {
    if (auth.scheme === 'header' && auth.header === undefined) ctx.addIssue({ code: 'custom', path: ['header'], message: 'required when scheme is "header"' });
    if (auth.scheme !== 'header' && auth.header !== undefined) ctx.addIssue({ code: 'custom', path: ['header'], message: 'only used when scheme is "header"' });
    if (auth.header !== undefined && RESERVED_HEADERS.has(auth.header.toLowerCase())) ctx.addIssue({ code: 'custom', path: ['header'], message: 'this header is set by the tool' });
  });

const ArgsSchema = z
  .strictObject({
    url: z.string().max(4096).superRefine((url, ctx) => checkHttpUrl('http_fetch', url, ctx)).describe('Absolute http or https URL, query included.'),
    method: z.enum(METHODS).default('GET').describe('HTTP method; GET when omitted.'),
    headers: z
      .record(headerName, z.string().max(8192).refine((value) => !UNSAFE_HEADER_VALUE.test(value), 'header values must not contain CR, LF or NUL'))
      .optional()
      .describe('Request headers.'),
    body: jsonValue('Request body: a string is sent as is, anything else as JSON.').optional(),
    auth: AuthSchema.optional().describe('Sends a named credential; the value is filled in outside the model.'),
  })
  .superRefine((args, ctx) => {
    if (args.body !== undefined && (args.method === 'GET' || args.method === 'HEAD')) ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${args.method} request has no body` });
    const given = Object.keys(args.headers ?? {});
    const names = given.map((name) => name.toLowerCase());
    // Runs even when a nested rule failed (zod reports every issue), so auth.header may be absent.
    const authHeader = args.auth ? (args.auth.scheme === 'header' ? (args.auth.header?.toLowerCase() ?? null) : 'authorization') : null;
    for (const [index, name] of names.entries()) {
      if (RESERVED_HEADERS.has(name)) ctx.addIssue({ code: 'custom', path: ['headers', given[index]!], message: 'this header is set by the tool' });
      if (name === authHeader) ctx.addIssue({ code: 'custom', path: ['headers', given[index]!], message: 'this header carries the auth credential' });
    }
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', path: ['headers'], message: 'a header is named twice' });
  });

export type HttpFetchArgs = z.output<typeof ArgsSchema>;

function idempotencyKeyOrigin(url: string, config: ToolsConfig): boolean {
  const origin = new URL(url).origin;
  return config.httpIdempotencyKeyOrigins.some((configured) => new URL(configured).origin === origin);
}

function credentialValue(ctx: ToolContext, name: string): string {
  const value = ctx.credentials[name];
  if (value === undefined || value === '') throw new ToolFailure('credential_unavailable', `the credential "${name}" was not provided for this call`);
  return value;
}

function requestHeaders(args: HttpFetchArgs, ctx: ToolContext, mutating: boolean): Record<string, string> {
  const headers: Record<string, string> = { 'accept-encoding': 'identity', 'user-agent': 'packetagent-http-fetch' };
  for (const [name, value] of Object.entries(args.headers ?? {})) headers[name.toLowerCase()] = value;
  if (typeof args.body === 'string') headers['content-type'] ??= 'text/plain; charset=utf-8';
  else if (args.body !== undefined) headers['content-type'] ??= 'application/json';
  if (mutating) headers['idempotency-key'] = ctx.idempotencyKey;
  if (args.auth) {
    const value = credentialValue(ctx, args.auth.credential);
    if (args.auth.scheme === 'bearer') headers['authorization'] = `Bearer ${value}`;
    else if (args.auth.scheme === 'basic') headers['authorization'] = `Basic ${Buffer.from(value, 'utf8').toString('base64')}`;
    else headers[args.auth.header!.toLowerCase()] = value;
  }
  return headers;
}

function requestBody(body: JsonValue | undefined): Buffer | undefined {
  if (body === undefined) return undefined;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

export const httpFetchTool: BuiltinTool<HttpFetchArgs> = {
  descriptor: {
    tool: 'http_fetch',
    description:
      'Makes one HTTP request to a public http(s) URL and returns the status, the content-type and the body as text (cut at 32 KiB). ' +
      'Redirects are not followed: a 3xx answer is reported with its Location. Private and internal addresses are refused.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: (args) => args.method,
    resource: (args) => canonicalUrl(args.url),
    mutating: (args) => MUTATING.includes(args.method),
    idempotentByKey: (args, config) => HTTP_IDEMPOTENT.has(args.method) || idempotencyKeyOrigin(args.url, config),
    credentials: (args) => (args.auth ? [args.auth.credential] : []),
    redact(args) {
      const redacted: JsonObject = { url: canonicalUrl(args.url), method: args.method };
      if (args.headers) {
        redacted['headers'] = Object.fromEntries(Object.entries(args.headers).map(([name, value]) => [name.toLowerCase(), isSensitiveHeader(name) ? '***' : redactBulk(value)]));
      }
      if (args.body !== undefined) redacted['body'] = redactBulk(args.body);
      if (args.auth) redacted['auth'] = { ...args.auth };
      return redacted;
    },
  },

  async execute(args, ctx, env): Promise<ToolOutcome> {
    const url = new URL(canonicalUrl(args.url));
    const mutating = MUTATING.includes(args.method);
    const limit = deadline(ctx.signal, env.config.httpTimeoutMs);
    try {
      const pinned = await abortable(checkedDestination(url, { resolveHost: env.resolveHost, allowPrivate: env.config.httpAllowPrivate }), limit.signal);
      const response = await exchange({
        url,
        method: args.method,
        headers: requestHeaders(args, ctx, mutating),
        body: requestBody(args.body),
        pinned,
        maxResponseBytes: env.config.httpMaxResponseBytes,
        signal: limit.signal,
      });
      const shown = displayUrl(url.href);
      if (response.status >= 300 && response.status < 400) {
        const location = response.headers.location;
        const target = location ? new URL(location, url).href : null;
        const message = target
          ? `the server answered ${response.status} redirecting to ${displayUrl(target)}; redirects are not followed: call http_fetch with that URL if it is granted`
          : `the server answered ${response.status} without a Location; redirects are not followed`;
        return failure('redirect_refused', message, { status: response.status, location: target });
      }
      const contentType = response.headers['content-type'];
      const textual = isTextual(contentType);
      const { text, truncated } = textual ? truncateText(new TextDecoder('utf-8').decode(response.body)) : { text: null, truncated: false };
      const output: JsonObject = {
        status: response.status,
        statusText: response.statusText,
        headers: shownHeaders(response.headers),
        body: text,
        truncated,
        bytes: response.body.length,
      };
      if (!textual) output['binary'] = true;
      const summary = `${args.method} ${shown} -> ${response.status} (${response.body.length} bytes)`;
      if (response.status >= 400) {
        const message = `the server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
        return { ok: false, output: { ...output, error: { code: 'http_error', message } }, summary, error: { code: 'http_error', message } };
      }
      return { ok: true, output, summary };
    } finally {
      limit.dispose();
    }
  },
};
