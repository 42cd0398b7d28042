// `npm run bench`: the same infrastructure rules as `npm test`, then tools/bench.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureInstalled, ROOT } from './install.mjs';

async function main() {
  ensureInstalled();
  const { ensureTestInfrastructure } = await import('./infra.mjs');
  const infra = await ensureTestInfrastructure({
    root: ROOT,
    databaseUrl: process.env.PACKETAGENT_BENCH_DATABASE_URL,
    natsUrl: process.env.PACKETAGENT_BENCH_NATS_URL,
    redisUrl: process.env.PACKETAGENT_BENCH_REDIS_URL,
    postgresPort: 54339,
    natsPort: 4249,
    log: (message) => process.stdout.write(`${message}\n`),
  });
  const env = { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json') };
  if (infra.databaseUrl) env.PACKETAGENT_TEST_DATABASE_URL = infra.databaseUrl;
  if (infra.natsUrl) env.PACKETAGENT_TEST_NATS_URL = infra.natsUrl;
  if (infra.redisUrl) env.PACKETAGENT_TEST_REDIS_URL = infra.redisUrl;
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'tools/bench/src/main.ts')], { cwd: ROOT, stdio: 'inherit', env });
    child.once('exit', (exitCode) => resolve(exitCode ?? 1));
  });
  await infra.stop();
  process.exit(code);
}

main();
