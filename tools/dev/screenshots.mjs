// `npm run screenshots`: builds the console, then runs its browser suite with screenshots on,
// which saves every page at desktop and phone widths to docs/screenshots/. Starts Postgres, NATS
// and Redis the way `npm test` does when none is configured or listening.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureInstalled, ROOT } from './install.mjs';

function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main() {
  ensureInstalled();
  const { ensureTestInfrastructure } = await import('./infra.mjs');
  let code = 1;
  let infra = null;
  try {
    infra = await ensureTestInfrastructure({
      root: ROOT,
      databaseUrl: process.env.PACKETAGENT_TEST_DATABASE_URL,
      natsUrl: process.env.PACKETAGENT_TEST_NATS_URL,
      redisUrl: process.env.PACKETAGENT_TEST_REDIS_URL,
      postgresPort: 54339,
      natsPort: 4239,
      log: (message) => process.stdout.write(`${message}\n`),
    });
    const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', PACKETAGENT_SCREENSHOTS_DIR: join(ROOT, 'docs/screenshots') };
    if (infra.databaseUrl) env.PACKETAGENT_TEST_DATABASE_URL = infra.databaseUrl;
    if (infra.natsUrl) env.PACKETAGENT_TEST_NATS_URL = infra.natsUrl;
    if (infra.redisUrl) env.PACKETAGENT_TEST_REDIS_URL = infra.redisUrl;
    code = await run('npx', ['nx', 'run', 'console:build', '--output-style=static'], env);
    if (code === 0) code = await run('npx', ['jest', '-c', 'frontend/console/e2e/jest.config.cjs'], env);
    if (code === 0) process.stdout.write('screenshots written to docs/screenshots/\n');
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
  } finally {
    await infra?.stop();
  }
  process.exit(code);
}

main();
