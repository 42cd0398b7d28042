// `npm start`: installs what is missing, starts Postgres, NATS and Redis unless URLs are given,
// then the all-in-one app; Ctrl-C stops everything this command started.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureInstalled, ROOT } from './install.mjs';

// Absolute: the app is handed this path and the messages below print it.
const DATA = resolve(process.env.PACKETAGENT_DATA_DIR || join(ROOT, '.data'));
const LOCK = join(DATA, 'packetagent.pid');
const PORT = Number(process.env.PACKETAGENT_PORT ?? 8484);
// localhost rather than 127.0.0.1: browsers bind passkeys to a host name and refuse an IP address.
const PUBLIC_URL = (process.env.PACKETAGENT_PUBLIC_URL ?? `http://localhost:${PORT}`).replace(/\/+$/, '');
const log = (message) => process.stdout.write(`${message}\n`);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The operations console the app serves at /: built once, on the first start of a clone. A
 * failed build does not stop the start; / then says how to build it.
 */
/** What run_command and browser will find here; neither ever falls back to running on the host. */
function sandboxNotes() {
  const notes = [];
  if (!existsSync('/usr/bin/bwrap') && !process.env.PACKETAGENT_SANDBOX_DOCKER_HOST) {
    notes.push('  sandbox:   bubblewrap not found: run_command answers sandbox_unavailable until you install it (sudo apt-get install bubblewrap) or set PACKETAGENT_SANDBOX_DRIVER=docker');
  }
  const chromium = process.env.PACKETAGENT_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(chromium)) notes.push(`  browser:   no Chromium at ${chromium}: the browser tool answers browser_unavailable until you install it (sudo apt-get install chromium) or set PACKETAGENT_CHROMIUM`);
  return notes;
}

function ensureConsoleBuilt() {
  const built = ['frontend/console/dist/browser/index.html', 'dist/frontend/console/browser/index.html'].some((path) => existsSync(join(ROOT, path)));
  if (built || !existsSync(join(ROOT, 'frontend/console/angular.json')) && !existsSync(join(ROOT, 'frontend/console/project.json'))) return;
  log('building the operations console (first start; about a minute)...');
  const result = spawnSync(process.execPath, [join(ROOT, 'node_modules/@angular/cli/bin/ng.js'), 'build'], {
    cwd: join(ROOT, 'frontend/console'),
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NG_CLI_ANALYTICS: 'false' },
  });
  if (result.status !== 0) log('the console did not build; the API works, and / says how to build the console');
}

/** One `npm start` per data directory: a second one says so and exits non-zero. */
function takeLock() {
  mkdirSync(DATA, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(LOCK, 'utf8'));
      if (pid && alive(pid)) {
        process.stderr.write(
          `PacketAgent is already running from this directory (pid ${pid}, http://127.0.0.1:${PORT}). Stop it with Ctrl-C in its terminal first.\n`,
        );
        process.exit(1);
      }
      rmSync(LOCK, { force: true });
    }
  }
  throw new Error(`could not take ${LOCK}`);
}

async function main() {
  takeLock();
  const stops = [];
  let stopping = false;
  const stopAll = async (code) => {
    if (stopping) return;
    stopping = true;
    log('\nStopping...');
    for (const stop of stops.reverse()) await stop().catch((error) => process.stderr.write(`${error.message}\n`));
    rmSync(LOCK, { force: true });
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stopAll(0));

  try {
    ensureInstalled();
    const { ensureDatabase, startEmbeddedPostgres, startNatsServer, startRedisServer } = await import('./infra.mjs');

    let databaseUrl = process.env.PACKETAGENT_DATABASE_URL;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres({
        dataDir: join(DATA, 'postgres'),
        port: Number(process.env.PACKETAGENT_EMBEDDED_POSTGRES_PORT ?? 54329),
        log,
      });
      stops.push(pg.stop);
      databaseUrl = await ensureDatabase(pg.url, 'packetagent');
      log(`Postgres: embedded, data in ${join(DATA, 'postgres')}`);
    }

    let natsUrl = process.env.PACKETAGENT_NATS_URL;
    if (!natsUrl) {
      const nats = await startNatsServer({
        storeDir: join(DATA, 'nats'),
        port: Number(process.env.PACKETAGENT_EMBEDDED_NATS_PORT ?? 4229),
        log,
      });
      stops.push(nats.stop);
      natsUrl = nats.url;
    }

    let redisUrl = process.env.PACKETAGENT_REDIS_URL;
    if (!redisUrl) {
      const redis = await startRedisServer({
        dir: join(DATA, 'redis'),
        port: Number(process.env.PACKETAGENT_EMBEDDED_REDIS_PORT ?? 6389),
        log,
      });
      stops.push(redis.stop);
      redisUrl = redis.url;
    }

    ensureConsoleBuilt();
    const app = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'services/all-in-one/src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json'),
        PACKETAGENT_DATABASE_URL: databaseUrl,
        PACKETAGENT_NATS_URL: natsUrl,
        PACKETAGENT_REDIS_URL: redisUrl,
        PACKETAGENT_DATA_DIR: DATA,
        PACKETAGENT_PORT: String(PORT),
        PACKETAGENT_PUBLIC_URL: PUBLIC_URL,
      },
      stdio: 'inherit',
      detached: true,
    });
    const appExited = new Promise((resolve) => app.once('exit', resolve));
    stops.push(async () => {
      if (app.exitCode === null && app.signalCode === null) {
        app.kill('SIGTERM');
        await appExited;
      }
    });
    appExited.then((code) => {
      if (!stopping) {
        process.stderr.write(`The PacketAgent app exited (${code}); stopping the rest.\n`);
        void stopAll(1);
      }
    });

    const base = `http://127.0.0.1:${PORT}`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const ready = await fetch(`${base}/readyz`).then((r) => r.ok).catch(() => false);
      if (ready) break;
      if (stopping) return;
      if (Date.now() > deadline) throw new Error(`the app did not become ready at ${base}/readyz within 120 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    // The app writes the token at boot while no owner exists and deletes it once setup is done.
    const setupToken = join(DATA, 'setup-token');
    log('');
    log(`PacketAgent is running at ${base}`);
    log(`  health:    ${base}/healthz   readiness: ${base}/readyz`);
    log(`  console:   ${PUBLIC_URL}/   (the public URL: passkeys are bound to its host name)`);
    log(`  API:       ${base}/api/v1   (OpenAPI: ${base}/api/v1/openapi.json)`);
    if (process.env.PACKETAGENT_GRPC_ENABLED !== 'false') {
      log(`  PacketADE: gRPC on 127.0.0.1:${process.env.PACKETAGENT_GRPC_PORT ?? 8485} (packetagent.v1.PacketAde; REST under ${base}/api/v1/packetade)`);
    }
    for (const line of sandboxNotes()) log(line);
    if (existsSync(setupToken)) {
      log(`First run: open ${PUBLIC_URL}/setup and paste the one-time token from ${setupToken}; or with curl:`);
      log(`  curl -X POST ${base}/api/v1/setup -H 'content-type: application/json' \\`);
      log(`    -d '{"token":"<token from the file>","email":"you@example.com","password":"<12+ characters>","workspace":"Ops"}'`);
      log('  The answer holds the workspace id and an owner API key (shown once).');
    } else {
      log(`Sign in at ${PUBLIC_URL}/ with your e-mail and password; for the API, POST ${base}/api/v1/auth/login or use an API key as "Authorization: Bearer pa_..."`);
    }
    log('Press Ctrl-C to stop everything this command started.');
  } catch (error) {
    process.stderr.write(`\n${error.message}\n`);
    await stopAll(1);
  }
}

main();
