// After `ng build`: writes a brotli (.br) and a gzip (.gz) copy beside every text file of the
// build, which the gateway sends to browsers that accept them (services/gateway/src/console).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const TEXT = new Set(['.html', '.js', '.mjs', '.css', '.json', '.txt', '.svg', '.map']);
const MIN_BYTES = 1024;
const root = process.argv[2] ?? join(import.meta.dirname, 'dist/browser');

let raw = 0;
let packed = 0;
for (const entry of readdirSync(root, { recursive: true })) {
  const file = join(root, String(entry));
  if (!TEXT.has(extname(file)) || !statSync(file).isFile()) continue;
  const body = readFileSync(file);
  if (body.length < MIN_BYTES) continue;
  const br = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  writeFileSync(`${file}.br`, br);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  raw += body.length;
  packed += br.length;
}
process.stdout.write(`precompressed ${(raw / 1024).toFixed(0)} KiB of text to ${(packed / 1024).toFixed(0)} KiB (brotli)\n`);
