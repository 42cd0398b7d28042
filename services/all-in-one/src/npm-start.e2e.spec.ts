import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually, freePort } from '@packetagent/testing';

const ROOT = resolve(__dirname, '../../..');

function listening(port: number): Promise<boolean> {
  return new Promise((resolveListening) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolveListening(true);
    });
    socket.once('error', () => resolveListening(false));
  });
}

function run(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  let output = '';
  const child = spawn(process.execPath, [join(ROOT, 'tools/dev/start.mjs')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, output: () => output, exit };
}

describe('npm start', () => {
  let dataDir: string;
  const ports = { app: 0, grpc: 0, postgres: 0, nats: 0, redis: 0 };
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pa-start-'));
    ports.app = await freePort();
    ports.grpc = await freePort();
    ports.postgres = await freePort();
    ports.nats = await freePort();
    ports.redis = await freePort();
  });

  afterAll(() => {
    for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts embedded Postgres, NATS, Redis and the app, says how to complete setup, refuses a second start, and stops everything on Ctrl-C', async () => {
    const env = {
      PACKETAGENT_DATA_DIR: dataDir,
      PACKETAGENT_PORT: String(ports.app),
      PACKETAGENT_GRPC_PORT: String(ports.grpc),
      PACKETAGENT_EMBEDDED_POSTGRES_PORT: String(ports.postgres),
      PACKETAGENT_EMBEDDED_NATS_PORT: String(ports.nats),
      PACKETAGENT_EMBEDDED_REDIS_PORT: String(ports.redis),
      PACKETAGENT_DATABASE_URL: '',
      PACKETAGENT_NATS_URL: '',
      PACKETAGENT_REDIS_URL: '',
      // The suite runs beside other tests: an `npm ci` here would pull node_modules from under them.
      PACKETAGENT_SKIP_INSTALL: '1',
    };
    const first = run(env);
    started.push(first.child);
    await eventually(() => first.output().includes('PacketAgent is running at'), { timeoutMs: 200_000, intervalMs: 100, what: `the first start (${first.output()})` });
    expect(first.output()).toContain(`http://127.0.0.1:${ports.app}`);
    expect((await fetch(`http://127.0.0.1:${ports.app}/readyz`)).status).toBe(200);
    // The console's address is a host name, so passkeys are on for a plain `npm start`.
    expect(first.output()).toContain(`console:   http://localhost:${ports.app}/`);
    const passkeyOptions = await fetch(`http://127.0.0.1:${ports.app}/api/v1/auth/login/passkey/options`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([passkeyOptions.status, ((await passkeyOptions.json()) as { rpId?: string }).rpId]).toEqual([200, 'localhost']);
    const tokenFile = join(dataDir, 'setup-token');
    expect(first.output()).toContain(tokenFile);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(first.output()).not.toContain(token);

    const second = run(env);
    started.push(second.child);
    expect(await second.exit).toBe(1);
    expect(second.output()).toMatch(/already running/);

    first.child.kill('SIGINT');
    expect(await first.exit).toBe(0);
    expect(await listening(ports.app)).toBe(false);
    expect(await listening(ports.nats)).toBe(false);
    expect(await listening(ports.postgres)).toBe(false);
    expect(await listening(ports.redis)).toBe(false);
    expect(existsSync(join(dataDir, 'packetagent.pid'))).toBe(false);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    // A clone's first start builds the console: on a busy 2-core machine that alone can take a minute or two.
  }, 240_000);
});
