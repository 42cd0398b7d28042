import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleAssets, consoleCsp, isReservedPath, safeRelativePath } from './console-assets';

describe(ConsoleAssets.name, () => {
  let build: string;

  beforeAll(() => {
    build = mkdtempSync(join(tmpdir(), 'pa-console-'));
    writeFileSync(join(build, 'index.html'), '<!doctype html><html><body><pa-root></pa-root></body></html>');
    writeFileSync(join(build, 'main-ABCD1234.js'), 'console.log(1)');
    writeFileSync(join(build, '3rdpartylicenses.txt'), 'licences');
    mkdirSync(join(build, 'media'));
  });
  afterAll(() => rmSync(build, { recursive: true, force: true }));

  it('answers a hashed file as immutable and an unhashed one as revalidated', () => {
    const sut = new ConsoleAssets([build]);
    expect(sut.answer('/main-ABCD1234.js')).toMatchObject({ kind: 'file', contentType: 'text/javascript; charset=utf-8', immutable: true });
    expect(sut.answer('/3rdpartylicenses.txt')).toMatchObject({ kind: 'file', immutable: false });
  });

  it('answers index.html with a fresh nonce for app routes and the root', () => {
    const sut = new ConsoleAssets([build]);
    const first = sut.answer('/w/ws_1/runs/run_1?tab=timeline');
    const second = sut.answer('/');
    expect(first.kind).toBe('index');
    expect(second.kind).toBe('index');
    if (first.kind !== 'index' || second.kind !== 'index') return;
    expect(first.body).toContain(`<pa-root ngCspNonce="${first.nonce}"`);
    expect(first.nonce).not.toBe(second.nonce);
  });

  it('answers 404 for a missing file with an extension, a directory, and any path leaving the build', () => {
    const sut = new ConsoleAssets([build]);
    expect(sut.answer('/chunk-MISSING1.js').kind).toBe('not-found');
    expect(sut.answer('/media').kind).toBe('index');
    expect(sut.answer('/media/').kind).toBe('index');
    expect(sut.answer('/%2e%2e/%2e%2e/etc/passwd').kind).toBe('not-found');
    expect(sut.answer('/..%2f..%2fetc/passwd').kind).toBe('not-found');
    expect(sut.answer('/%E0%A4%A').kind).toBe('not-found');
  });

  it('answers a page saying how to build when no build is found, and finds a build made later', () => {
    const later = join(build, 'later');
    const sut = new ConsoleAssets([later]);
    const missing = sut.answer('/');
    expect(missing.kind).toBe('missing-build');
    if (missing.kind === 'missing-build') expect(missing.body).toContain('npm run build');
    mkdirSync(later);
    writeFileSync(join(later, 'index.html'), '<pa-root></pa-root>');
    expect(sut.answer('/').kind).toBe('index');
  });
});

describe(safeRelativePath.name, () => {
  it('keeps plain paths and refuses traversal, dot files and backslashes', () => {
    expect(safeRelativePath('/a/b.js')).toBe('a/b.js');
    expect(safeRelativePath('/')).toBe('');
    expect(safeRelativePath('/a/../b')).toBeNull();
    expect(safeRelativePath('/.env')).toBeNull();
    expect(safeRelativePath('/a\\..\\b')).toBeNull();
  });
});

describe(isReservedPath.name, () => {
  it('reserves the API and operational endpoints but not look-alike app paths', () => {
    expect(['/api', '/api/v1/nope', '/hooks/t1', '/healthz', '/readyz?x=1', '/metrics'].map(isReservedPath)).toEqual([true, true, true, true, true, true]);
    expect(['/', '/apis', '/w/ws/runs', '/metricsboard'].map(isReservedPath)).toEqual([false, false, false, false]);
  });
});

describe(consoleCsp.name, () => {
  it('allows only own scripts and nonce-bearing inline styles', () => {
    const sut = consoleCsp('n0nce');
    expect(sut).toContain("script-src 'self'");
    expect(sut).toContain("style-src 'self' 'nonce-n0nce'");
    expect(sut).toContain("frame-ancestors 'none'");
    expect(sut).not.toContain('unsafe-inline');
  });
});
