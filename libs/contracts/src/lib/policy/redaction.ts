import type { JsonValue } from '../json';

/** Replaces a redacted value; never a value a caller could have sent. */
export const REDACTED = '***';

// A URL anywhere in a text: scheme, `//`, then everything up to whitespace or a quote.
const URL_IN_TEXT = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>]*/g;

function redactUrl(url: string): string {
  const schemeEnd = url.indexOf('://') + 3;
  const rest = url.slice(schemeEnd);
  const authorityEnd = rest.search(/[/?#]/);
  let authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  let tail = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  // The last "@" ends the userinfo, whatever it contains.
  const at = authority.lastIndexOf('@');
  if (at >= 0) authority = authority.slice(at + 1);
  const hash = tail.indexOf('#');
  const fragment = hash < 0 ? '' : tail.slice(hash);
  if (hash >= 0) tail = tail.slice(0, hash);
  const question = tail.indexOf('?');
  if (question >= 0) {
    const query = tail
      .slice(question + 1)
      .split('&')
      .map((pair) => {
        if (pair === '') return pair;
        const equals = pair.indexOf('=');
        return `${equals < 0 ? pair : pair.slice(0, equals)}=${REDACTED}`;
      })
      .join('&');
    tail = `${tail.slice(0, question)}?${query}`;
  }
  // A fragment can carry a token (OAuth implicit flow), so it is never kept.
  return `${url.slice(0, schemeEnd)}${authority}${tail}${fragment ? `#${REDACTED}` : ''}`;
}

/**
 * A resource as it may be recorded: every URL in it loses its userinfo, each query value becomes
 * `***` and a fragment is replaced. Everything else is kept, so an operator still sees what
 * was asked for.
 */
export function redactResource(resource: string): string {
  return resource.replace(URL_IN_TEXT, redactUrl);
}

/** Applies redactResource to every string (keys kept) of an already-redacted argument document. */
export function redactJson(value: JsonValue): JsonValue {
  if (typeof value === 'string') return redactResource(value);
  if (Array.isArray(value)) return value.map(redactJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactJson(item)]));
  }
  return value;
}
