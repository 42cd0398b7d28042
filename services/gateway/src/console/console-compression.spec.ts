import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { ConsoleAssets, pickEncoding } from './console-assets';

const SCRIPT = `export const rows = [${Array.from({ length: 400 }, (_, i) => `{ id: ${i}, name: "row ${i}" }`).join(', ')}];\n`;

describe(pickEncoding.name, () => {
  const both = { br: true, gzip: true };

  it('prefers brotli, falls back to gzip, and sends neither when none is accepted', () => {
    expect(pickEncoding('gzip, deflate, br, zstd', both)).toBe('br');
    expect(pickEncoding('gzip, deflate', both)).toBe('gzip');
    expect(pickEncoding('br', { br: false, gzip: true })).toBeNull();
    expect(pickEncoding(undefined, both)).toBeNull();
    expect(pickEncoding('identity', both)).toBeNull();
  });

  it('honours q=0 refusals and the wildcard', () => {
    expect(pickEncoding('br;q=0, gzip;q=0.8', both)).toBe('gzip');
    expect(pickEncoding('*', both)).toBe('br');
    expect(pickEncoding('*;q=0', both)).toBeNull();
  });
});

describe(ConsoleAssets.name, () => {
  let build: string;

  beforeEach(() => {
    build = mkdtempSync(join(tmpdir(), 'pa-console-gz-'));
    writeFileSync(join(build, 'index.html'), '<!doctype html><html><body><pa-root></pa-root></body></html>');
    writeFileSync(join(build, 'main-ABCD1234.js'), SCRIPT);
    writeFileSync(join(build, 'tiny-ABCD1234.js'), 'console.log(1)');
    writeFileSync(join(build, 'logo.png'), Buffer.alloc(4096, 1));
  });
  afterEach(() => rmSync(build, { recursive: true, force: true }));

  it('serves the brotli and gzip files the build wrote beside a script', () => {
    writeFileSync(join(build, 'main-ABCD1234.js.br'), brotliCompressSync(SCRIPT));
    writeFileSync(join(build, 'main-ABCD1234.js.gz'), gzipSync(SCRIPT));
    const sut = new ConsoleAssets([build]);

    const br = sut.answer('/main-ABCD1234.js', 'gzip, br');
    const gz = sut.answer('/main-ABCD1234.js', 'gzip');
    const plain = sut.answer('/main-ABCD1234.js');

    expect(br).toMatchObject({ kind: 'file', encoding: 'br', vary: true, immutable: true });
    expect(gz).toMatchObject({ kind: 'file', encoding: 'gzip', vary: true });
    expect(plain).toMatchObject({ kind: 'file', encoding: null, vary: true });
    if (br.kind !== 'file' || gz.kind !== 'file' || plain.kind !== 'file') return;
    expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    expect(gunzipSync(gz.body).toString()).toBe(SCRIPT);
    expect(plain.body.toString()).toBe(SCRIPT);
    expect(br.body.length).toBeLessThan(SCRIPT.length / 3);
  });

  it('compresses a build made without compressed files once warmed, and leaves small files and images as they are', async () => {
    const sut = new ConsoleAssets([build]);

    await sut.warm();

    const br = sut.answer('/main-ABCD1234.js', 'br');
    expect(br).toMatchObject({ kind: 'file', encoding: 'br' });
    if (br.kind === 'file') expect(brotliDecompressSync(br.body).toString()).toBe(SCRIPT);
    expect(sut.answer('/tiny-ABCD1234.js', 'br')).toMatchObject({ kind: 'file', encoding: null, vary: false });
    expect(sut.answer('/logo.png', 'br')).toMatchObject({ kind: 'file', encoding: null, vary: false, contentType: 'image/png' });
  });

  it('never answers the compressed copies themselves as files', () => {
    writeFileSync(join(build, 'main-ABCD1234.js.br'), brotliCompressSync(SCRIPT));
    expect(new ConsoleAssets([build]).answer('/main-ABCD1234.js.br').kind).toBe('not-found');
  });
});
