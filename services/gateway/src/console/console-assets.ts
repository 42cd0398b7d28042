import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** Angular's build names every emitted chunk and stylesheet `<name>-<8 hash chars>.<ext>`. */
const HASHED = /-[A-Z0-9]{8}\.(?:js|css)$/;

/** Paths the console never answers: the API and the operational endpoints keep their own 404s. */
export const RESERVED_PREFIXES = ['/api', '/hooks', '/healthz', '/readyz', '/metrics'] as const;

export function isReservedPath(path: string): boolean {
  const bare = path.split('?')[0] ?? '';
  return RESERVED_PREFIXES.some((prefix) => bare === prefix || bare.startsWith(`${prefix}/`));
}

export type ConsoleAnswer =
  | { kind: 'file'; body: Buffer; contentType: string; immutable: boolean }
  | { kind: 'index'; body: string; nonce: string }
  | { kind: 'missing-build'; body: string }
  | { kind: 'not-found' };

/**
 * The built console (frontend/console, `ng build`): files by path, and index.html for every
 * route of the single-page app. The directory is looked up again while no build is found, so
 * building after start-up needs no restart. Files are read once and kept: the build is a few
 * hundred kilobytes and never changes under a running process.
 */
export class ConsoleAssets {
  private root: string | null = null;
  private indexTemplate: string | null = null;
  private readonly cache = new Map<string, { body: Buffer; contentType: string; immutable: boolean } | null>();

  constructor(private readonly candidates: readonly string[]) {}

  get directory(): string | null {
    if (this.root === null) {
      this.root = this.candidates.map((dir) => resolve(dir)).find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
    }
    return this.root;
  }

  answer(urlPath: string): ConsoleAnswer {
    const root = this.directory;
    if (!root) return { kind: 'missing-build', body: missingBuildPage(this.candidates) };
    const relative = safeRelativePath(urlPath);
    if (relative === null) return { kind: 'not-found' };
    if (relative !== '' && relative !== 'index.html') {
      const file = this.file(root, relative);
      if (file) return { kind: 'file', ...file };
      // A missing chunk or image is a 404, not the app: a stale tab must not parse HTML as JavaScript.
      if (extname(relative) !== '') return { kind: 'not-found' };
    }
    const nonce = randomBytes(16).toString('base64');
    return { kind: 'index', body: this.index(root).replace('<pa-root', `<pa-root ngCspNonce="${nonce}"`), nonce };
  }

  private index(root: string): string {
    this.indexTemplate ??= readFileSync(join(root, 'index.html'), 'utf8');
    return this.indexTemplate;
  }

  private file(root: string, relative: string): { body: Buffer; contentType: string; immutable: boolean } | null {
    if (this.cache.has(relative)) return this.cache.get(relative) ?? null;
    const absolute = join(root, relative);
    let found: { body: Buffer; contentType: string; immutable: boolean } | null = null;
    if (absolute.startsWith(root + sep) && existsSync(absolute) && statSync(absolute).isFile()) {
      const contentType = CONTENT_TYPES[extname(relative).toLowerCase()] ?? 'application/octet-stream';
      found = { body: readFileSync(absolute), contentType, immutable: HASHED.test(relative) };
    }
    this.cache.set(relative, found);
    return found;
  }
}

/** The path inside the build directory, or null when it tries to leave it or is malformed. */
export function safeRelativePath(urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath.split('?')[0] ?? '');
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter(Boolean);
  if (segments.some((segment) => segment === '..' || segment.startsWith('.'))) return null;
  return normalize(segments.join('/')).replace(/^\.$/, '');
}

/** Content-Security-Policy of the console: only its own scripts; styles by Angular carry the page's nonce. */
export function consoleCsp(nonce: string | null): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self'${nonce ? ` 'nonce-${nonce}'` : ''}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function missingBuildPage(candidates: readonly string[]): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PacketAgent: console not built</title></head>
<body>
<h1>The operations console is not built</h1>
<p>The API is running at <a href="/api/v1/openapi.json">/api/v1</a>. To serve the console here, build it and reload this page:</p>
<pre>npm run build          # the app and the console, into dist/
npx nx run console:build   # the console only, into frontend/console/dist/</pre>
<p>Looked for index.html in:</p>
<ul>${candidates.map((dir) => `<li><code>${escapeHtml(resolve(dir))}</code></li>`).join('')}</ul>
</body></html>
`;
}
