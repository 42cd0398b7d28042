// `npm test`: installs what is missing, makes sure Postgres, NATS and Redis are reachable (starting
// local ones when nothing is configured or listening), then lint, typecheck and every test.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { ensureInstalled, ROOT } from './install.mjs';

function listening(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function main() {
  ensureInstalled();
  const { ensureTestInfrastructure } = await import('./infra.mjs');
  const { ensureSystemPackages } = await import('./system-packages.mjs');
  let code = 1;
  let infra = null;
  try {
    // A NATS or Redis already listening (or named by URL) is used as it is: its server binary is not needed.
    const skip = [];
    if (process.env.PACKETAGENT_TEST_NATS_URL || (await listening(4222))) skip.push('nats-server');
    if (process.env.PACKETAGENT_TEST_REDIS_URL || (await listening(6379))) skip.push('redis-server');
    ensureSystemPackages({ log: (message) => process.stdout.write(`${message}\n`), skip });
    infra = await ensureTestInfrastructure({
      root: ROOT,
      databaseUrl: process.env.PACKETAGENT_TEST_DATABASE_URL,
      natsUrl: process.env.PACKETAGENT_TEST_NATS_URL,
      redisUrl: process.env.PACKETAGENT_TEST_REDIS_URL,
      postgresPort: 54339,
      natsPort: 4239,
      log: (message) => process.stdout.write(`${message}\n`),
    });
    const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
    if (infra.databaseUrl) env.PACKETAGENT_TEST_DATABASE_URL = infra.databaseUrl;
    if (infra.natsUrl) env.PACKETAGENT_TEST_NATS_URL = infra.natsUrl;
    if (infra.redisUrl) env.PACKETAGENT_TEST_REDIS_URL = infra.redisUrl;
    code = await new Promise((resolve) => {
      // CI checks everything afresh; locally, unchanged lint, typecheck and build results are reused.
      const args = ['nx', 'run-many', '-t', 'lint', 'typecheck', 'test', 'build', '--output-style=static', ...(process.env.CI ? ['--skip-nx-cache'] : [])];
      const child = spawn('npx', args, { cwd: ROOT, stdio: 'inherit', env });
      child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    });
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
  } finally {
    await infra?.stop();
  }
  process.exit(code);
}

main();
