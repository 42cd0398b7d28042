// `npm run bench`: same infrastructure rules as `npm test`, then tools/bench.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled, ROOT } from './install.mjs';

async function main() {
  ensureInstalled();
  const { isListening, startEmbeddedPostgres, startNatsServer } = await import('./infra.mjs');
  const log = (m) => process.stdout.write(`${m}\n`);
  const stops = [];
  const env = { SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json') };
  if (process.env.PACKETAGENT_BENCH_DATABASE_URL) env.PACKETAGENT_TEST_DATABASE_URL = process.env.PACKETAGENT_BENCH_DATABASE_URL;
  else if (!(await isListening('127.0.0.1', 5432))) {
    const pg = await startEmbeddedPostgres({ dataDir: join(ROOT, '.data', 'test-postgres'), port: 54339, log });
    stops.push(pg.stop);
    env.PACKETAGENT_TEST_DATABASE_URL = pg.url;
  }
  if (process.env.PACKETAGENT_BENCH_NATS_URL) env.PACKETAGENT_TEST_NATS_URL = process.env.PACKETAGENT_BENCH_NATS_URL;
  else if (!(await isListening('127.0.0.1', 4222))) {
    const storeDir = mkdtempSync(join(tmpdir(), 'pa-bench-nats-'));
    const nats = await startNatsServer({ storeDir, port: 4249, log });
    stops.push(async () => {
      await nats.stop();
      rmSync(storeDir, { recursive: true, force: true });
    });
    env.PACKETAGENT_TEST_NATS_URL = nats.url;
  }
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'tools/bench/src/main.ts')], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...env },
    });
    child.once('exit', (c) => resolve(c ?? 1));
  });
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  process.exit(code);
}

main();
