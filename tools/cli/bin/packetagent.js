#!/usr/bin/env node
'use strict';
// In a source checkout, the sources bundled once into a cache and rebuilt when they change (see
// bundle-cache.js); otherwise the compiled CLI `npm run build` produced; as a last resort, the
// TypeScript sources through @swc-node/register (a development dependency, slow to start).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { bundledCli, runBundle } = require('./bundle-cache');

const root = join(__dirname, '..', '..', '..');
const sources = join(__dirname, '..', 'src', 'main.ts');
const bundle = existsSync(sources) ? bundledCli(root, process.env.PACKETAGENT_CLI_CACHE_DIR) : null;
const compiled = join(root, 'dist', 'tools', 'cli', 'src', 'main.js');
if (bundle) {
  runBundle(root, bundle);
} else if (existsSync(compiled)) {
  require(compiled);
} else {
  try {
    require.resolve('@swc-node/register');
  } catch {
    process.stderr.write('error: the packetagent CLI is not built: run `npm run build`, or install the development dependencies.\n');
    process.exit(1);
  }
  process.env.SWC_NODE_PROJECT ??= join(__dirname, '..', 'tsconfig.json');
  require('@swc-node/register');
  require('../src/main.ts');
}
