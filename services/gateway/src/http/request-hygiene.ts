import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InvalidCharactersError, InvalidCursorParameterError, NestingTooDeepError, UnsupportedCharsetError } from './boundary-errors';
import { hasInvalidCharacter, inspectFields, inspectJson, MAX_NESTING_DEPTH, yamlNestingDepth } from './untrusted-input';

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml']);
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function charsetOf(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '');
  return match ? match[1]!.toLowerCase() : null;
}

/** Every cursor this API issues is base64url of printable ASCII; anything else is refused before it is decoded further. */
function isWellFormedCursor(cursor: unknown): boolean {
  if (cursor === undefined) return true;
  if (typeof cursor !== 'string' || !BASE64URL.test(cursor)) return false;
  return PRINTABLE_ASCII.test(Buffer.from(cursor, 'base64url').toString('latin1'));
}

function mediaTypeOf(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * The checks every request passes once, before any route reads it, so no route has to repeat
 * them: bodies are UTF-8; no path parameter, query value or body string holds a NUL or an
 * unpaired surrogate (Postgres refuses both, and neither is text); a body nests at most
 * MAX_NESTING_DEPTH levels; a `cursor` is shaped like one this API issued.
 */
export function installRequestHygiene(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', async (request) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') throw new UnsupportedCharsetError();
    const issues = [...inspectFields(request.params), ...inspectFields(request.query)];
    if (issues.length) throw new InvalidCharactersError(issues);
    if (!isWellFormedCursor((request.query as Record<string, unknown> | undefined)?.['cursor'])) throw new InvalidCursorParameterError();
  });
  fastify.addHook('preValidation', async (request) => {
    const body: unknown = request.body;
    if (typeof body === 'string') {
      if (hasInvalidCharacter(body)) throw new InvalidCharactersError([{ path: 'body', message: 'contains a NUL character or an unpaired UTF-16 surrogate' }]);
      if (YAML_TYPES.has(mediaTypeOf(request)) && yamlNestingDepth(body) > MAX_NESTING_DEPTH) throw new NestingTooDeepError();
      return;
    }
    if (body === null || typeof body !== 'object' || !isParsedFields(body)) return;
    const finding = inspectJson(body, 'body');
    if (finding.tooDeep) throw new NestingTooDeepError();
    if (finding.issues.length) throw new InvalidCharactersError(finding.issues);
  });
}

/** Parsed JSON or form fields, not the bytes or stream of a route that takes its body raw. */
function isParsedFields(value: object): boolean {
  return !Buffer.isBuffer(value) && !ArrayBuffer.isView(value) && typeof (value as { pipe?: unknown }).pipe !== 'function';
}
