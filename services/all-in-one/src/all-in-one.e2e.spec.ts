import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, eventually, testEnv, type TestDatabase } from '@packetagent/testing';

const ROOT = resolve(__dirname, '../../..');

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));
}

async function readyz(port: number): Promise<{ status: number; body: { status: string; failing: string[] } }> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: response.status, body: (await response.json()) as { status: string; failing: string[] } };
}

describe('all-in-one', () => {
  let db: TestDatabase;
  let natsDir: string;
  let nats: ChildProcess | null = null;
  let app: ChildProcess | null = null;
  let natsPort: number;
  let port: number;

  const startNats = () => {
    nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', natsDir], { stdio: 'ignore' });
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // Drop the cloned schema: the app must migrate an empty database itself.
    await db.pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    natsDir = mkdtempSync(join(tmpdir(), 'pa-nats-'));
    natsPort = await freePort();
    port = await freePort();
    startNats();
  });

  afterAll(async () => {
    app?.kill('SIGKILL');
    nats?.kill('SIGKILL');
    await db.drop().catch(() => undefined);
    rmSync(natsDir, { recursive: true, force: true });
  });

  it('migrates, serves health and readiness, names what fails, recovers, and stops cleanly', async () => {
    let output = '';
    app = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, 'services/all-in-one/src/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json'),
        PACKETAGENT_PORT: String(port),
        PACKETAGENT_DATABASE_URL: db.url,
        PACKETAGENT_NATS_URL: `nats://127.0.0.1:${natsPort}`,
        PACKETAGENT_RELAY_POLL_MS: '50',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    app.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    app.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));

    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { timeoutMs: 30_000, what: `healthz (${output})` });
    const ready = await eventually(async () => {
      const r = await readyz(port);
      return r.status === 200 && r;
    }, { timeoutMs: 10_000, what: 'ready' });
    expect(ready.body).toMatchObject({ status: 'ready', failing: [] });
    const tables = await db.pool.query(`SELECT count(*) FROM information_schema.tables WHERE table_name IN ('events', 'streams', 'relay_cursors')`);
    expect(Number(tables.rows[0].count)).toBe(3);

    // NATS goes away: not ready, naming nats; it comes back: ready again.
    nats!.kill('SIGKILL');
    await exited(nats!);
    const down = await eventually(async () => {
      const r = await readyz(port);
      return r.status === 503 && r;
    }, { what: 'not ready without nats' });
    expect(down.body.failing).toEqual(['nats']);
    startNats();
    await eventually(async () => (await readyz(port)).status === 200, { timeoutMs: 15_000, what: 'ready after nats restart' });

    // Postgres connections are cut: not ready, naming postgres.
    const admin = new Client({ connectionString: testEnv.databaseUrl });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${db.name} WITH ALLOW_CONNECTIONS false`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db.name]);
    const noDb = await eventually(async () => {
      const r = await readyz(port);
      return r.status === 503 && r.body.failing.includes('postgres') && r;
    }, { what: 'not ready without postgres' });
    expect(noDb.body.failing).toEqual(expect.arrayContaining(['postgres', 'relay']));
    await admin.query(`ALTER DATABASE ${db.name} WITH ALLOW_CONNECTIONS true`);
    await admin.end();
    await eventually(async () => (await readyz(port)).status === 200, { timeoutMs: 15_000, what: 'ready after postgres returns' });

    app.kill('SIGTERM');
    expect(await exited(app)).toBe(0);
  });
});
