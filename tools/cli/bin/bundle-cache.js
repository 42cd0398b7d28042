'use strict';
// The CLI's TypeScript sources bundled into one CommonJS file under node_modules/.cache, built on
// first use and again whenever a file it was built from changes: a start then costs one require
// instead of transpiling every source file. npm packages stay outside the bundle and load from
// node_modules as usual.
const { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, join, resolve } = require('node:path');
const vm = require('node:vm');

/** Changes with the build options below, so a cache built with other options is rebuilt. */
const FORMAT = 2;

/**
 * Packages every command loads at start, taken into the bundle: node resolves and reads each
 * file of an npm package on its own, which for zod's hundred files costs more than the rest of
 * the start. Every other package (the Postgres and NATS clients only `replay` loads, native
 * modules) stays outside and loads from node_modules.
 */
const BUNDLED_PACKAGES = new Set(['zod', 'yaml', 'commander', 'canonicalize', 'croner', 'uuid']);

function externalPackages(root) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.optionalDependencies });
  return names.filter((name) => !BUNDLED_PACKAGES.has(name));
}

function signature(path) {
  try {
    const stat = statSync(path);
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return null;
  }
}

function paths(root, cacheDir) {
  const dir = cacheDir || join(root, 'node_modules', '.cache', 'packetagent-cli');
  return { dir, bundle: join(dir, 'cli.js'), manifest: join(dir, 'cli.inputs.json') };
}

/** True when the bundle exists and every file it was built from is as it was then. */
function isFresh(root, files) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(files.manifest, 'utf8'));
  } catch {
    return false;
  }
  if (manifest.format !== FORMAT || signature(files.bundle) !== manifest.bundle) return false;
  return Object.entries(manifest.inputs).every(([input, stored]) => signature(resolve(root, input)) === stored);
}

function build(root, files) {
  // Loaded only to build: a fresh cache never pays for it.
  const { buildSync } = require('esbuild');
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [join(root, 'tools', 'cli', 'src', 'main.ts')],
    outfile: files.bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: externalPackages(root),
    tsconfig: join(root, 'tsconfig.base.json'),
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const inputs = {};
  // The bundled packages' files are inputs too, so an upgrade of one rebuilds the bundle; package.json decides what is bundled.
  for (const input of [...Object.keys(result.metafile.inputs), 'tsconfig.base.json', 'package.json']) inputs[input] = signature(resolve(root, input));
  mkdirSync(files.dir, { recursive: true });
  // Written aside and renamed, so a CLI starting meanwhile reads either the old file or the new one.
  const temporary = `${files.bundle}.${process.pid}.tmp`;
  writeFileSync(temporary, result.outputFiles[0].contents);
  renameSync(temporary, files.bundle);
  const manifest = { format: FORMAT, bundle: signature(files.bundle), inputs };
  writeFileSync(`${files.manifest}.${process.pid}.tmp`, JSON.stringify(manifest));
  renameSync(`${files.manifest}.${process.pid}.tmp`, files.manifest);
}

/**
 * The path of an up-to-date bundle of the CLI, building it when needed; null when it cannot be
 * had here (no esbuild, a read-only cache directory, a source that does not compile), for the
 * caller to start the CLI another way.
 */
function bundledCli(root, cacheDir) {
  const files = paths(root, cacheDir);
  if (isFresh(root, files)) return files.bundle;
  try {
    build(root, files);
    return files.bundle;
  } catch {
    return null;
  }
}

/**
 * Runs the bundle as if it were tools/cli/src/main.js, wherever the cache is: npm packages
 * resolve from the checkout's node_modules and the CLI finds its package.json above it. V8's code
 * cache for the bundle is kept beside it (V8 refuses a cache made for other source, and it is
 * then made again), which spares compiling the bundle on every start.
 */
function runBundle(root, bundle) {
  const filename = join(root, 'tools', 'cli', 'src', 'main.js');
  const codeCache = `${bundle}.v8cache`;
  let cachedData;
  try {
    cachedData = readFileSync(codeCache);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(readFileSync(bundle, 'utf8')), { filename, cachedData });
  const entry = new Module(filename, module);
  entry.filename = filename;
  entry.paths = Module._nodeModulePaths(dirname(filename));
  script.runInThisContext().call(entry.exports, entry.exports, Module.createRequire(filename), entry, filename, dirname(filename));
  entry.loaded = true;
  if (cachedData === undefined || script.cachedDataRejected) {
    // After the start, so the cache holds the functions the start compiled too; a cache that cannot be written only costs speed.
    try {
      const temporary = `${codeCache}.${process.pid}.tmp`;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, codeCache);
    } catch {
      // A read-only cache directory: the next start compiles the bundle again.
    }
  }
}

module.exports = { bundledCli, isFresh, paths, runBundle };
