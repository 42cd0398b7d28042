#!/usr/bin/env node
'use strict';
// Runs the compiled CLI when `npm run build` has produced it; in a source checkout, the
// TypeScript sources through @swc-node/register (a development dependency).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const compiled = join(__dirname, '..', '..', '..', 'dist', 'tools', 'cli', 'src', 'main.js');
if (existsSync(compiled)) {
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
