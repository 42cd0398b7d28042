import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, eventually, exitOf, freePort, NatsServerProcess, testEnv, type TestDatabase } from '@packetagent/testing';

const ROOT = resolve(__dirname, '../../..');

async function readyz(port: number): Promise<{ status: number; body: { status: string; failing: string[] } }> {
  let response: Response;
  try {
    response = await fetch(`http://127.0.0.1:${port}/readyz`);
  } catch (error) {
    // undici's errors come from another realm than the test's Error: say what failed in words.
    throw new Error(`GET /readyz failed: ${String((error as { cause?: unknown })?.cause ?? error)}`);
  }
  return { status: response.status, body: (await response.json()) as { status: string; failing: string[] } };
}

describe('all-in-one', () => {
  let db: TestDatabase;
  let natsDir: string;
  let nats: NatsServerProcess;
  let app: ChildProcess | null = null;
  let port: number;
  let grpcPort: number;

  beforeAll(async () => {
    // Empty: the app must migrate it itself.
    db = await createTestDatabase({ empty: true });
    natsDir = mkdtempSync(join(tmpdir(), 'pa-nats-'));
    nats = new NatsServerProcess(await freePort(), natsDir);
    port = await freePort();
    grpcPort = await freePort();
    await nats.start();
  });

  afterAll(async () => {
    app?.kill('SIGKILL');
    await nats.crash();
    await db.drop().catch(() => undefined);
    rmSync(natsDir, { recursive: true, force: true });
  });

  it('migrates, serves health and readiness, names what fails, recovers, and stops cleanly', async () => {
    let output = '';
    // The compiled app, as images ship it (`npm run build`; the test target depends on build).
    app = spawn(process.execPath, [join(ROOT, 'dist/services/all-in-one/src/main.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        PACKETAGENT_PORT: String(port),
        PACKETAGENT_GRPC_PORT: String(grpcPort),
        PACKETAGENT_DATABASE_URL: db.url,
        PACKETAGENT_NATS_URL: nats.url,
        PACKETAGENT_RELAY_POLL_MS: '50',
        PACKETAGENT_REDIS_URL: testEnv.redisUrl,
        PACKETAGENT_REDIS_KEY_PREFIX: `e2e${Date.now().toString(36)}:`,
        PACKETAGENT_DATA_DIR: natsDir,
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
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const exposition = await metrics.text();
    expect(exposition).toMatch(/^packetagent_relay_active 1$/m);
    expect(exposition).toMatch(/^packetagent_relay_backlog_events 0$/m);
    expect(exposition).toMatch(/^process_cpu_user_seconds_total /m);
    expect(exposition).toMatch(/^packetagent_scheduler_leader 1$/m);
    const tables = await db.pool.query(`SELECT count(*) FROM information_schema.tables WHERE table_name IN ('events', 'streams', 'relay_cursors')`);
    expect(Number(tables.rows[0].count)).toBe(3);

    // NATS goes away: not ready, naming nats; it comes back: ready again.
    await nats.crash();
    const down = await eventually(async () => {
      const r = await readyz(port);
      return r.status === 503 && r;
    }, { what: 'not ready without nats' });
    expect(down.body.failing).toEqual(['nats']);
    await nats.start();
    await eventually(async () => (await readyz(port)).status === 200, { timeoutMs: 15_000, what: 'ready after nats restart' });

    // Postgres connections are cut: not ready, naming postgres.
    const admin = new Client({ connectionString: testEnv.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${db.name} WITH ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db.name]);
      const noDb = await eventually(async () => {
        const r = await readyz(port);
        return r.status === 503 && r.body.failing.includes('postgres') && r;
      }, { timeoutMs: 15_000, what: 'not ready without postgres' }).catch((error: unknown) => {
        // What the app said up to the failure, not up to the start of the wait.
        throw new Error(`${error instanceof Error ? error.message : String(error)}; the app's exit code: ${app?.exitCode ?? 'running'}; its last output: ${output.slice(-4000)}`);
      });
      expect(noDb.body.failing).toEqual(expect.arrayContaining(['postgres', 'relay']));
    } finally {
      await admin.query(`ALTER DATABASE ${db.name} WITH ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    await eventually(async () => (await readyz(port)).status === 200, { timeoutMs: 15_000, what: 'ready after postgres returns' });

    app.kill('SIGTERM');
    expect(await exitOf(app)).toBe(0);
  });
});
