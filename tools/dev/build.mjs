// `npm run build`: compiles the all-in-one app and the libraries it loads to dist/ (CommonJS,
// path aliases rewritten to relative requires, source maps), copies the migrations and builds
// the operations console, so production runs plain `node dist/services/all-in-one/src/main.js`
// without a compiler.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ROOT } from './install.mjs';

const { transformFile } = await import('@swc/core');
const OUT = join(ROOT, 'dist');
const SOURCES = ['libs/contracts/src', 'libs/bus/src', 'libs/telemetry/src', 'libs/eventstore/src', 'libs/providers/src', 'libs/tools/src', 'libs/projections/src', 'services/supervisor/src', 'services/projector/src', 'services/intake/src', 'services/scheduler/src', 'services/gateway/src', 'services/policy/src', 'services/budget/src', 'services/vault/src', 'services/sandbox/src', 'services/notifications/src', 'services/all-in-one/src', 'tools/cli/src'];
const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8'));

function* walk(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (path.endsWith('.ts') && !/\.(spec|testkit)\.ts$/.test(path)) yield path;
  }
}

function* walkAll(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* walkAll(path);
    else yield path;
  }
}

rmSync(OUT, { recursive: true, force: true });
let count = 0;
for (const source of SOURCES) {
  for (const file of walk(join(ROOT, source))) {
    const output = await transformFile(file, {
      jsc: {
        target: 'es2022',
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true },
        baseUrl: ROOT,
        paths: compilerOptions.paths,
      },
      module: { type: 'commonjs' },
      sourceMaps: true,
      sourceFileName: relative(ROOT, file),
    });
    const target = join(OUT, relative(ROOT, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, `${output.code}\n//# sourceMappingURL=${target.split('/').pop()}.map\n`);
    writeFileSync(`${target}.map`, output.map ?? '');
    count++;
  }
}
const migrations = join(ROOT, 'libs/eventstore/migrations');
mkdirSync(join(OUT, 'libs/eventstore/migrations'), { recursive: true });
for (const file of readdirSync(migrations)) copyFileSync(join(migrations, file), join(OUT, 'libs/eventstore/migrations', file));
// The gRPC contract, read at start-up by the PacketADE door.
const protos = join(ROOT, 'libs/contracts/proto');
for (const file of walkAll(protos)) {
  const target = join(OUT, relative(ROOT, file));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
}
process.stdout.write(`compiled ${count} files to ${relative(ROOT, OUT)}/; entry: dist/services/all-in-one/src/main.js\n`);

// The operations console: built straight into dist/ (not via frontend/console/dist, which the
// console's own Nx build target writes, possibly at the same moment). Skipped when the sources
// or the Angular CLI are absent (an image built without them): the app then answers / with a
// page saying how to build it.
const CONSOLE = join(ROOT, 'frontend/console');
const NG = join(ROOT, 'node_modules/@angular/cli/bin/ng.js');
if (existsSync(join(CONSOLE, 'angular.json')) && existsSync(NG)) {
  const built = spawnSync(process.execPath, [NG, 'build', '--output-path', join(OUT, 'frontend/console')], {
    cwd: CONSOLE,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NG_CLI_ANALYTICS: 'false' },
  });
  if (built.status !== 0) {
    process.stderr.write('the console build failed; see above\n');
    process.exit(built.status ?? 1);
  }
  process.stdout.write(`built the console to ${relative(ROOT, join(OUT, 'frontend/console/browser'))}/\n`);
} else {
  process.stdout.write('console sources or the Angular CLI not found: the console is not built; / will say how to build it\n');
}
