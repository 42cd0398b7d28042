// `npm test`: installs what is missing, makes sure Postgres and NATS are reachable (starting
// local ones when nothing is configured or listening), then lint, typecheck and every test.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled, ROOT } from './install.mjs';

const log = (message) => process.stdout.write(`${message}\n`);

function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...env } });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main() {
  ensureInstalled();
  const { isListening, startEmbeddedPostgres, startNatsServer } = await import('./infra.mjs');
  const stops = [];
  const env = { NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
  let code = 1;
  try {
    if (!process.env.PACKETAGENT_TEST_DATABASE_URL && !(await isListening('127.0.0.1', 5432))) {
      log('No Postgres on 127.0.0.1:5432: starting the embedded one for the tests.');
      const pg = await startEmbeddedPostgres({ dataDir: join(ROOT, '.data', 'test-postgres'), port: 54339, log });
      stops.push(pg.stop);
      env.PACKETAGENT_TEST_DATABASE_URL = pg.url;
    }
    if (!process.env.PACKETAGENT_TEST_NATS_URL && !(await isListening('127.0.0.1', 4222))) {
      log('No NATS on 127.0.0.1:4222: starting nats-server for the tests.');
      const storeDir = mkdtempSync(join(tmpdir(), 'pa-test-nats-'));
      const nats = await startNatsServer({ storeDir, port: 4239, log });
      stops.push(async () => {
        await nats.stop();
        rmSync(storeDir, { recursive: true, force: true });
      });
      env.PACKETAGENT_TEST_NATS_URL = nats.url;
    }
    code = await run('npx', ['nx', 'run-many', '-t', 'lint', 'typecheck', 'test', '--output-style=static'], env);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
  process.exit(code);
}

main();
