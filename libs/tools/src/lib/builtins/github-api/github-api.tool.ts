import type { Octokit } from '@octokit/rest' with { 'resolution-mode': 'import' };
import { canonicalJson, CREDENTIAL_NAME_PATTERN, KNOWN_TOOLS, normaliseResource, type JsonObject, type JsonValue } from '@packetagent/contracts';
import { z } from 'zod';
import type { ToolOutcome } from '../../tool.types';
import { ToolFailure } from '../../errors';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { deadline } from '../../internal/deadline';
import { displayUrl } from '../../internal/http-shared';
import { jsonValue, toParameters } from '../../internal/schema';
import { oneLine, redactBulk, truncateText } from '../../internal/text';

/** Grants name GitHub by its public API origin, wherever the configured base URL points. */
export const GITHUB_PUBLIC_API = 'https://api.github.com';

const METHODS = KNOWN_TOOLS.github_api.verbs;

const ArgsSchema = z
  .strictObject({
    method: z.enum(METHODS).describe('HTTP method of the GitHub REST endpoint.'),
    path: z
      .string()
      .max(2048)
      .superRefine((path, ctx) => {
        if (!path.startsWith('/') || path.startsWith('//')) {
          ctx.addIssue({ code: 'custom', message: 'must be an API path such as /repos/owner/repo/issues' });
          return;
        }
        const [pathname] = path.split(/[?#]/, 1) as [string];
        if (path.includes('#')) ctx.addIssue({ code: 'custom', message: 'a fragment is not allowed' });
        if (/\s/.test(path)) ctx.addIssue({ code: 'custom', message: 'must not contain whitespace' });
        if (/[{}]/.test(path)) ctx.addIssue({ code: 'custom', message: 'placeholders are not expanded: write the concrete path' });
        if (pathname.split('/').some((segment) => segment === '.' || segment === '..')) ctx.addIssue({ code: 'custom', message: 'dot segments are not allowed' });
        const checked = normaliseResource('github_api', `${GITHUB_PUBLIC_API}${pathname}`);
        if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
      })
      .describe('API path with any query, e.g. /repos/acme/widgets/issues?state=open.'),
    body: jsonValue('JSON request body (for POST, PUT and PATCH).').optional(),
    credential: z.string().regex(CREDENTIAL_NAME_PATTERN, 'not a credential name').describe('Name of the credential holding the GitHub token.'),
  })
  .superRefine((args, ctx) => {
    if (args.body !== undefined && args.method === 'GET') ctx.addIssue({ code: 'custom', path: ['body'], message: 'a GET request has no body' });
  });

export type GithubApiArgs = z.output<typeof ArgsSchema>;

type OctokitModule = { Octokit: typeof Octokit };
let octokitModule: Promise<OctokitModule> | undefined;

/** @octokit/rest ships only as an ES module; it is loaded on the first GitHub call. */
function loadOctokit(): Promise<OctokitModule> {
  octokitModule ??= import('@octokit/rest');
  return octokitModule;
}

/**
 * fetch for Octokit: redirects come back as answers (never followed) and the body is read with
 * a cap, the connection being dropped as soon as it is exceeded.
 */
function cappedFetch(limit: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, { ...init, redirect: 'manual' });
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.length;
        if (total > limit) {
          await reader.cancel();
          throw new ToolFailure('response_too_large', `the response is larger than ${limit} bytes; the connection was closed`);
        }
        chunks.push(value);
      }
    }
    const nullBody = response.status === 204 || response.status === 205 || response.status === 304;
    return new Response(nullBody ? null : Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The response data as the model sees it: JSON when it fits, otherwise its text cut. */
function boundedData(data: unknown): { data: JsonValue; truncated: boolean } {
  if (data === undefined || data === '') return { data: null, truncated: false };
  const text = typeof data === 'string' ? data : canonicalJson(data as JsonValue);
  const cut = truncateText(text);
  if (!cut.truncated) return { data: typeof data === 'string' ? data : (data as JsonValue), truncated: false };
  return { data: cut.text, truncated: true };
}

interface OctokitError extends Error {
  status: number;
  response?: { data?: unknown };
  cause?: unknown;
}

function isOctokitError(error: unknown): error is OctokitError {
  return error instanceof Error && typeof (error as Partial<OctokitError>).status === 'number';
}

export const githubApiTool: BuiltinTool<GithubApiArgs> = {
  descriptor: {
    tool: 'github_api',
    description: 'Calls one GitHub REST API endpoint with a named token credential and returns the status and the JSON answer (cut at 32 KiB).',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: (args) => args.method,
    resource: (args) => `${GITHUB_PUBLIC_API}${args.path}`,
    mutating: (args) => args.method !== 'GET',
    // GitHub honours no idempotency key: only PUT and DELETE are safe to repeat.
    idempotentByKey: (args) => args.method === 'GET' || args.method === 'PUT' || args.method === 'DELETE',
    credentials: (args) => [args.credential],
    redact(args) {
      const redacted: JsonObject = { method: args.method, path: args.path, credential: args.credential };
      if (args.body !== undefined) redacted['body'] = redactBulk(args.body);
      return redacted;
    },
  },

  async execute(args, ctx, env): Promise<ToolOutcome> {
    const token = ctx.credentials[args.credential];
    if (!token) throw new ToolFailure('credential_unavailable', `the credential "${args.credential}" was not provided for this call`);
    const { Octokit } = await loadOctokit();
    const limit = deadline(ctx.signal, env.config.httpTimeoutMs);
    const octokit = new Octokit({
      auth: token,
      baseUrl: env.config.githubBaseUrl.replace(/\/+$/, ''),
      userAgent: 'packetagent-github-api',
      // @octokit/rest has no retry or throttling plugin: one call is one request. The log is
      // silenced because deprecation warnings quote request URLs.
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
      request: { fetch: cappedFetch(env.config.httpMaxResponseBytes), signal: limit.signal, redirect: 'manual' },
    });
    const shown = `${args.method} ${displayUrl(`${GITHUB_PUBLIC_API}${args.path}`).slice(GITHUB_PUBLIC_API.length)}`;
    try {
      const response = await octokit.request(`${args.method} ${args.path}`, args.body === undefined ? {} : { data: args.body });
      const status = response.status as number;
      if (status >= 300 && status < 400) {
        const location = (response.headers as Record<string, string | undefined>)['location'] ?? null;
        return failure('redirect_refused', `GitHub answered ${status}${location ? ` redirecting to ${displayUrl(location)}` : ''}; redirects are not followed`, { status, location });
      }
      const { data, truncated } = boundedData(response.data);
      return { ok: true, output: { status, data, truncated }, summary: `${shown} -> ${status}` };
    } catch (error) {
      if (error instanceof ToolFailure) throw error;
      if (isOctokitError(error)) {
        if (error.cause instanceof ToolFailure) throw error.cause;
        if (error.status === 500 && error.response === undefined) {
          throw new ToolFailure('connection_failed', `${args.method} to GitHub failed: ${oneLine(error.message)}`, null, { cause: error });
        }
        const { data } = boundedData(error.response?.data);
        const detail = data !== null && typeof data === 'object' && !Array.isArray(data) && typeof data['message'] === 'string' ? `: ${oneLine(data['message'])}` : '';
        const message = `GitHub answered ${error.status}${detail}`;
        return { ok: false, output: { status: error.status, data, error: { code: 'github_error', message } }, summary: `${shown} -> ${error.status}`, error: { code: 'github_error', message } };
      }
      throw error;
    } finally {
      limit.dispose();
    }
  },
};
