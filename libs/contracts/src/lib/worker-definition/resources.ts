import { KNOWN_TOOLS, type ToolName } from './known-tools';

export type ResourceCheck = { ok: true; value: string } | { ok: false; message: string };

/** Longest resource string accepted, before normalisation. */
export const MAX_RESOURCE_LENGTH = 2048;

function hasControlCharacter(text: string, { allowSpaceAndTab }: { allowSpaceAndTab: boolean }): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (allowSpaceAndTab && (code === 0x20 || code === 0x09)) continue;
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}

const ok = (value: string): ResourceCheck => ({ ok: true, value });
const refusal = (base: string) => (reason?: string): ResourceCheck => ({ ok: false, message: reason ? `${base}: ${reason}` : base });

/**
 * Checks one resource of a grant for `tool` and returns its normal form, so that two spellings
 * of the same resource compare (and digest) equal.
 */
export function normaliseResource(tool: ToolName, raw: string): ResourceCheck {
  switch (KNOWN_TOOLS[tool].resourceKind) {
    case 'url':
      return normaliseUrlPattern(raw);
    case 'path':
      return normalisePathGlob(raw);
    case 'command':
      return normaliseCommandPattern(raw);
    case 'address':
      return tool === 'slack_post' ? normaliseChannel(raw) : normaliseEmailPattern(raw);
    case 'mcp':
      return normaliseMcpResource(raw);
    case 'none':
      return { ok: false, message: `${tool} takes no resources` };
  }
}

/**
 * Whether every concrete resource matched by `requested` is also matched by `granted` (both in
 * normal form). Answers false whenever containment is not certain.
 */
export function resourceCovers(tool: ToolName, granted: string, requested: string): boolean {
  if (granted === requested) return true;
  switch (KNOWN_TOOLS[tool].resourceKind) {
    case 'url':
      return urlPatternCovers(granted, requested);
    case 'path':
      return pathGlobCovers(granted, requested);
    case 'command':
      return commandPatternCovers(granted, requested);
    case 'address':
      return addressCovers(granted, requested);
    case 'mcp':
      return mcpResourceCovers(granted, requested);
    case 'none':
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// URLs: scheme://host[:port][/path-glob]. In the path, `*` matches any run of characters,
// slashes included (as in browser match patterns); an absent path means the whole origin.

interface UrlPattern {
  scheme: 'http' | 'https';
  /** Lower-case host without the wildcard prefix; IPv6 in brackets. */
  host: string;
  /** The host was written `*.host`: any subdomain of `host`, not `host` itself. */
  wildcard: boolean;
  /** Empty for the scheme's default port. */
  port: string;
  path: string | undefined;
}

const URL_SHAPE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/]*)(\/.*)?$/s;
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const WILDCARD_PLACEHOLDER = 'wildcard-placeholder.';
const HOST_WILDCARD_RULE = 'a wildcard is only allowed as a leading "*." followed by at least two labels';

function parseUrlPattern(raw: string): { ok: true; pattern: UrlPattern } | { ok: false; message: string } {
  const fail = (reason?: string) => refusal('not a URL origin or glob')(reason) as { ok: false; message: string };
  if (raw.includes('\\') || hasControlCharacter(raw, { allowSpaceAndTab: false })) return fail('contains whitespace, a control character or a backslash');
  const match = URL_SHAPE.exec(raw);
  if (!match) return fail();
  const scheme = match[1]!.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return fail(`scheme "${scheme}" is not http or https`);
  const authority = match[2]!;
  const rawPath = match[3];
  if (rawPath?.includes('?') || authority.includes('?')) return fail('a query is not allowed');
  if (rawPath?.includes('#') || authority.includes('#')) return fail('a fragment is not allowed');
  if (authority.includes('@')) return fail('userinfo is not allowed');
  if (authority === '') return fail('the host is missing');

  if (authority.startsWith('*.[')) return fail(HOST_WILDCARD_RULE);
  let hostPart: string;
  let port: string | undefined;
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    if (end < 0) return fail('unterminated IPv6 address');
    hostPart = authority.slice(0, end + 1);
    const rest = authority.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return fail('unexpected text after the IPv6 address');
    port = rest === '' ? undefined : rest.slice(1);
  } else {
    const colon = authority.lastIndexOf(':');
    hostPart = colon < 0 ? authority : authority.slice(0, colon);
    port = colon < 0 ? undefined : authority.slice(colon + 1);
  }
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)) {
    return fail('the port must be a number from 1 to 65535');
  }

  const wildcard = hostPart.startsWith('*.');
  const bareHost = wildcard ? hostPart.slice(2) : hostPart;
  if (bareHost.includes('*') || bareHost === '') return fail(HOST_WILDCARD_RULE);

  let parsed: URL;
  try {
    parsed = new URL(`${scheme}://${wildcard ? WILDCARD_PLACEHOLDER : ''}${bareHost}${port === undefined ? '' : `:${port}`}/`);
  } catch {
    return fail(wildcard ? HOST_WILDCARD_RULE : 'invalid host');
  }
  let host = parsed.hostname;
  if (wildcard) {
    if (!host.startsWith(WILDCARD_PLACEHOLDER)) return fail(HOST_WILDCARD_RULE);
    host = host.slice(WILDCARD_PLACEHOLDER.length);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (!host.startsWith('[')) {
    // Percent-encoding in the host is decoded by the URL parser, so the wildcard rule and the
    // label grammar are checked again on the decoded host.
    const labels = host.split('.');
    if (host.includes('*')) return fail(HOST_WILDCARD_RULE);
    if (host.length > 253 || !labels.every((label) => HOST_LABEL.test(label))) return fail('invalid host');
    if (wildcard && labels.length < 2) return fail(HOST_WILDCARD_RULE);
  } else if (wildcard) {
    return fail(HOST_WILDCARD_RULE);
  }

  let path: string | undefined;
  if (rawPath !== undefined) {
    const normalised = normaliseUrlPath(rawPath);
    if (!normalised.ok) return fail(normalised.message);
    path = normalised.value;
  }
  return { ok: true, pattern: { scheme, host, wildcard, port: parsed.port, path } };
}

function normaliseUrlPath(raw: string): ResourceCheck {
  if (!PATH_CHARS.test(raw)) return { ok: false, message: 'the path contains a character that must be percent-encoded' };
  if (/%(?![0-9A-Fa-f]{2})/.test(raw)) return { ok: false, message: 'malformed percent-encoding in the path' };
  const decoded = raw.replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  // RFC 3986 section 5.2.4, on segments: a dot segment at the end leaves a trailing slash.
  const input = decoded.split('/').slice(1);
  const output: string[] = [];
  for (const [index, segment] of input.entries()) {
    const last = index === input.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') {
        if (output.length > 0 && output[output.length - 1]!.includes('*')) {
          return { ok: false, message: '".." after a wildcard segment is ambiguous' };
        }
        output.pop();
      }
      if (last) output.push('');
    } else {
      output.push(segment);
    }
  }
  return ok(`/${output.join('/')}`);
}

function formatUrlPattern(pattern: UrlPattern): string {
  return `${pattern.scheme}://${pattern.wildcard ? '*.' : ''}${pattern.host}${pattern.port ? `:${pattern.port}` : ''}${pattern.path ?? ''}`;
}

function normaliseUrlPattern(raw: string): ResourceCheck {
  const parsed = parseUrlPattern(raw);
  return parsed.ok ? ok(formatUrlPattern(parsed.pattern)) : parsed;
}

function urlPatternCovers(granted: string, requested: string): boolean {
  const a = parseUrlPattern(granted);
  const b = parseUrlPattern(requested);
  if (!a.ok || !b.ok) return false;
  const [g, r] = [a.pattern, b.pattern];
  if (g.scheme !== r.scheme || g.port !== r.port) return false;
  const hostCovered = g.wildcard ? r.host.endsWith(`.${g.host}`) || (r.wildcard && r.host === g.host) : !r.wildcard && r.host === g.host;
  return hostCovered && starCovers(g.path ?? '/*', r.path ?? '/*');
}

/**
 * Whether glob `pattern` (where `*` matches any run of characters) matches every string matched
 * by glob `text`: a `*` of `text` can only be absorbed by a `*` of `pattern`, since a literal of
 * `pattern` is never `*`.
 */
function starCovers(pattern: string, text: string): boolean {
  return wildcardMatch(pattern, text, () => false);
}

/** Greedy wildcard matching with backtracking; `?` of `pattern` matches one char accepted by `single`. */
function wildcardMatch(pattern: string, text: string, single: (char: string) => boolean): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.length && (pattern[p] === text[t] || (pattern[p] === '?' && single(text[t]!)))) {
      p++;
      t++;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

// ---------------------------------------------------------------------------------------------
// Workspace paths: relative globs; `*` and `?` stay within one segment, `**` spans segments.

const PATH_BASE = 'not a relative path glob inside the run workspace';

function normalisePathGlob(raw: string): ResourceCheck {
  const fail = refusal(PATH_BASE);
  if (raw.includes('\u0000')) return fail('contains a NUL character');
  if (hasControlCharacter(raw, { allowSpaceAndTab: true })) return fail('contains a control character');
  if (raw.includes('\\')) return fail('a backslash is not a path separator; use "/"');
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return fail('absolute paths are not allowed');
  if (raw.startsWith('~')) return fail('home-relative paths are not allowed');
  // A tool that decodes percent-escapes would turn these into separators or dot segments.
  if (/%(2e|2f|5c|00)/i.test(raw)) return fail('a percent-encoded ".", "/", "\\" or NUL is not allowed');
  if (/[[\]{}]/.test(raw)) return fail('only the wildcards *, ** and ? are supported');
  const output: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (output.length === 0) return fail('".." escapes the run workspace');
      if (/[*?]/.test(output[output.length - 1]!)) return fail('".." after a wildcard segment can escape the run workspace');
      output.pop();
      continue;
    }
    if (segment.includes('**') && segment !== '**') return fail('"**" must be a whole path segment');
    output.push(segment);
  }
  if (output.length === 0) return fail('names no path (use "**" for the whole run workspace)');
  return ok(output.join('/'));
}

function pathGlobCovers(granted: string, requested: string): boolean {
  const a = granted.split('/');
  const b = requested.split('/');
  const memo = new Map<number, boolean>();
  const covers = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === a.length) result = j === b.length;
    else if (a[i] === '**') result = covers(i + 1, j) || (j < b.length && covers(i, j + 1));
    else if (j === b.length || b[j] === '**') result = false;
    else result = wildcardMatch(a[i]!, b[j]!, (char) => char !== '*') && covers(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return covers(0, 0);
}

// ---------------------------------------------------------------------------------------------
// Commands: `program [args-glob]`; `*` in the arguments matches any run of characters.

const COMMAND_BASE = 'not a command pattern';

function normaliseCommandPattern(raw: string): ResourceCheck {
  const fail = refusal(COMMAND_BASE);
  if (/[;|&$<>`]/.test(raw)) return fail('shell metacharacters ; | & $ < > ` are not allowed');
  if (hasControlCharacter(raw, { allowSpaceAndTab: true })) return fail('contains a control character');
  const collapsed = raw.trim().replace(/[ \t]+/g, ' ');
  if (collapsed === '') return fail('empty');
  if (collapsed === '*') return fail('"*" is too broad: name the program');
  const space = collapsed.indexOf(' ');
  const program = space < 0 ? collapsed : collapsed.slice(0, space);
  if (program.includes('/')) return fail('the program must be a plain name, not a path');
  if (/[*?]/.test(program)) return fail('the program must be a plain name without wildcards');
  if (!/^[A-Za-z0-9_][A-Za-z0-9._+-]*$/.test(program)) return fail('the program must be a plain name');
  return ok(collapsed);
}

function splitCommand(pattern: string): [string, string] {
  const space = pattern.indexOf(' ');
  return space < 0 ? [pattern, ''] : [pattern.slice(0, space), pattern.slice(space + 1)];
}

function commandPatternCovers(granted: string, requested: string): boolean {
  const [grantedProgram, grantedArgs] = splitCommand(granted);
  const [requestedProgram, requestedArgs] = splitCommand(requested);
  return grantedProgram === requestedProgram && starCovers(grantedArgs, requestedArgs);
}

// ---------------------------------------------------------------------------------------------
// Addresses: Slack channels and email addresses.

const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function normaliseChannel(raw: string): ResourceCheck {
  const value = raw.toLowerCase();
  if (!/^#[a-z0-9][a-z0-9._-]{0,79}$/.test(value)) return { ok: false, message: 'not a Slack channel: expected "#name"' };
  return ok(value);
}

function normaliseEmailPattern(raw: string): ResourceCheck {
  const fail = refusal('not an email address or "*@domain"');
  const value = raw.toLowerCase();
  const at = value.lastIndexOf('@');
  if (at < 0) return fail();
  const local = value.slice(0, at);
  let domain = value.slice(at + 1);
  if (domain.endsWith('.')) domain = domain.slice(0, -1);
  if (local !== '*' && !/^[a-z0-9._%+-]{1,64}$/.test(local)) return fail('invalid local part');
  const labels = domain.split('.');
  if (labels.length < 2 || domain.length > 253 || !labels.every((label) => DOMAIN_LABEL.test(label)) || /^\d+$/.test(labels[labels.length - 1]!)) {
    return fail('the domain must be a host name with at least two labels');
  }
  return ok(`${local}@${domain}`);
}

function addressCovers(granted: string, requested: string): boolean {
  if (!granted.startsWith('*@')) return false;
  const domain = granted.slice(1);
  return requested.endsWith(domain) && !requested.slice(0, -domain.length).includes('@');
}

// ---------------------------------------------------------------------------------------------
// MCP tools: `<server>/<tool>` or `<server>/*` (every tool the version pinned for the server).

const MCP_RESOURCE = /^([a-z][a-z0-9_-]{0,31})\/(\*|[A-Za-z0-9_.-]{1,128})$/;

/** Accepts the `mcp:` prefix of a tool id too, so `mcp:gh/x` and `gh/x` are one resource. */
function normaliseMcpResource(raw: string): ResourceCheck {
  const value = raw.startsWith('mcp:') ? raw.slice('mcp:'.length) : raw;
  if (!MCP_RESOURCE.test(value)) return { ok: false, message: 'not an MCP tool: expected "<server>/<tool>" or "<server>/*"' };
  return ok(value);
}

/** The server and tool of an MCP resource in normal form; `tool` is `*` for the whole server. */
export function splitMcpResource(resource: string): { server: string; tool: string } | null {
  const match = MCP_RESOURCE.exec(resource);
  return match ? { server: match[1]!, tool: match[2]! } : null;
}

function mcpResourceCovers(granted: string, requested: string): boolean {
  const a = splitMcpResource(granted);
  const b = splitMcpResource(requested);
  return a !== null && b !== null && a.server === b.server && (a.tool === '*' || a.tool === b.tool);
}
