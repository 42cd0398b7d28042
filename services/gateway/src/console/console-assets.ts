import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, relative as relativePath, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

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

/** Text formats worth compressing; images and fonts are compressed already. */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.txt', '.svg', '.map']);

/** Smaller files gain less from compression than the header costs. */
const MIN_COMPRESS_BYTES = 1024;

export type ContentEncoding = 'br' | 'gzip';

/** The encoding to send for an Accept-Encoding header: brotli over gzip, neither when refused (`;q=0`) or absent. */
export function pickEncoding(acceptEncoding: string | undefined, available: { br: boolean; gzip: boolean }): ContentEncoding | null {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (available.br && ok('br')) return 'br';
  if (available.gzip && ok('gzip')) return 'gzip';
  return null;
}

interface AssetFile {
  body: Buffer;
  contentType: string;
  immutable: boolean;
  compressible: boolean;
  br: Buffer | null;
  gzip: Buffer | null;
}

/** Paths the console never answers: the API and the operational endpoints keep their own 404s. */
export const RESERVED_PREFIXES = ['/api', '/hooks', '/healthz', '/readyz', '/metrics'] as const;

export function isReservedPath(path: string): boolean {
  const bare = path.split('?')[0] ?? '';
  return RESERVED_PREFIXES.some((prefix) => bare === prefix || bare.startsWith(`${prefix}/`));
}

export type ConsoleAnswer =
  | { kind: 'file'; body: Buffer; contentType: string; immutable: boolean; encoding: ContentEncoding | null; vary: boolean }
  | { kind: 'index'; body: string; nonce: string }
  | { kind: 'missing-build'; body: string }
  | { kind: 'not-found' };

/**
 * The built console (frontend/console, `ng build`): files by path, and index.html for every
 * route of the single-page app. The directory is looked up again while no build is found, so
 * building after start-up needs no restart. Files are read once and kept: the build is a few
 * hundred kilobytes and never changes under a running process.
 *
 * Text files go out brotli- or gzip-compressed as the browser accepts: the `.br` and `.gz` files
 * the console's build writes beside each one, or, for a build made without them, copies
 * compressed once in the background (`warm`) and served uncompressed until they are ready.
 */
export class ConsoleAssets {
  private root: string | null = null;
  private indexTemplate: string | null = null;
  private readonly cache = new Map<string, AssetFile | null>();
  private warming: Promise<void> | null = null;

  constructor(private readonly candidates: readonly string[]) {}

  get directory(): string | null {
    if (this.root === null) {
      this.root = this.candidates.map((dir) => resolve(dir)).find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
    }
    return this.root;
  }

  answer(urlPath: string, acceptEncoding?: string): ConsoleAnswer {
    const root = this.directory;
    if (!root) return { kind: 'missing-build', body: missingBuildPage(this.candidates) };
    // The first answer from a build starts compressing it; the failure of that only means uncompressed answers.
    if (!this.warming) this.warm().catch(() => (this.warming = null));
    const relative = safeRelativePath(urlPath);
    if (relative === null) return { kind: 'not-found' };
    if (relative !== '' && relative !== 'index.html') {
      const file = this.file(root, relative);
      if (file) {
        const encoding = pickEncoding(acceptEncoding, { br: file.br !== null, gzip: file.gzip !== null });
        const body = encoding === 'br' ? file.br! : encoding === 'gzip' ? file.gzip! : file.body;
        return { kind: 'file', body, contentType: file.contentType, immutable: file.immutable, encoding, vary: file.compressible };
      }
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

  /**
   * Compresses, in the thread pool, every text file of the build that has no compressed copy
   * beside it; the event loop is never held up by it. Resolves once all are ready.
   */
  warm(): Promise<void> {
    const root = this.directory;
    if (!root) return Promise.resolve();
    this.warming ??= (async () => {
      for (const relative of listFiles(root)) {
        const file = this.file(root, relative);
        if (!file?.compressible || (file.br && file.gzip)) continue;
        const [br, gz] = await Promise.all([
          file.br ?? brotli(file.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: file.body.length } }),
          file.gzip ?? gzipped(file.body, { level: 9 }),
        ]);
        file.br = br;
        file.gzip = gz;
      }
    })();
    return this.warming;
  }

  private file(root: string, relative: string): AssetFile | null {
    if (this.cache.has(relative)) return this.cache.get(relative) ?? null;
    const absolute = join(root, relative);
    let found: AssetFile | null = null;
    if (absolute.startsWith(root + sep) && existsSync(absolute) && statSync(absolute).isFile()) {
      const extension = extname(relative).toLowerCase();
      const contentType = CONTENT_TYPES[extension] ?? (extension === '.br' || extension === '.gz' ? null : 'application/octet-stream');
      if (contentType) {
        const body = readFileSync(absolute);
        const compressible = COMPRESSIBLE.has(extension) && body.length >= MIN_COMPRESS_BYTES;
        const sibling = (suffix: string) => (compressible && existsSync(absolute + suffix) ? readFileSync(absolute + suffix) : null);
        found = { body, contentType, immutable: HASHED.test(relative), compressible, br: sibling('.br'), gzip: sibling('.gz') };
      }
    }
    this.cache.set(relative, found);
    return found;
  }
}

/** Every file under `root`, as paths relative to it. */
function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relativePath(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
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
