import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { ConsoleController } from './console.controller';
import { ConsoleModule } from './console.module';

const SCRIPT = `export const rows = [${Array.from({ length: 400 }, (_, i) => `{ id: ${i} }`).join(', ')}];\n`;

/** The real gateway over HTTP serving a console build from a temporary directory. */
describe(ConsoleController.name, () => {
  let sut: GatewayTestApp;
  let build: string;

  beforeAll(async () => {
    build = mkdtempSync(join(tmpdir(), 'pa-console-http-'));
    writeFileSync(join(build, 'index.html'), '<!doctype html><html><body><pa-root></pa-root><script src="main-ABCD1234.js"></script></body></html>');
    writeFileSync(join(build, 'main-ABCD1234.js'), SCRIPT);
    sut = await startGatewayTestApp({ modules: [ConsoleModule.forRoot({ directory: build })] });
  });
  afterAll(async () => {
    await sut.close();
    rmSync(build, { recursive: true, force: true });
  });

  it('sends hashed assets compressed and immutable, and index.html revalidated', async () => {
    const index = await fetch(`${sut.baseUrl}/w/ws_1/overview`, { headers: { 'accept-encoding': 'br, gzip' } });
    expect(index.headers.get('cache-control')).toBe('no-cache');
    await index.text();
    // The first answer starts the background compression of a build without .br/.gz files.
    const assets = sut.app.get(ConsoleController)['assets'];
    await assets.warm();

    const response = await fetch(`${sut.baseUrl}/main-ABCD1234.js`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    const raw = Buffer.from(await response.arrayBuffer());

    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('vary')).toBe('accept-encoding');
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    // fetch decodes the body itself; its length on the wire is the header's.
    expect(response.headers.get('content-encoding')).toBe('br');
    expect(Number(response.headers.get('content-length'))).toBeLessThan(SCRIPT.length / 3);
    expect(raw.toString()).toBe(SCRIPT);
    const served = assets.answer('/main-ABCD1234.js', 'br');
    expect(served.kind === 'file' && brotliDecompressSync(served.body).toString()).toBe(SCRIPT);
  });
});
