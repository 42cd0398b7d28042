// `npm run build`: compiles the all-in-one app and the libraries it loads to dist/ (CommonJS,
// path aliases rewritten to relative requires, source maps), and copies the migrations, so
// production runs plain `node dist/services/all-in-one/src/main.js` without a compiler.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ROOT } from './install.mjs';

const { transformFile } = await import('@swc/core');
const OUT = join(ROOT, 'dist');
const SOURCES = ['libs/contracts/src', 'libs/bus/src', 'libs/telemetry/src', 'libs/eventstore/src', 'libs/providers/src', 'libs/tools/src', 'libs/projections/src', 'services/supervisor/src', 'services/projector/src', 'services/intake/src', 'services/scheduler/src', 'services/gateway/src', 'services/policy/src', 'services/budget/src', 'services/vault/src', 'services/all-in-one/src', 'tools/cli/src'];
const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8'));

function* walk(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* walk(path);
    else if (path.endsWith('.ts') && !/\.(spec|testkit)\.ts$/.test(path)) yield path;
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
process.stdout.write(`compiled ${count} files to ${relative(ROOT, OUT)}/; entry: dist/services/all-in-one/src/main.js\n`);
