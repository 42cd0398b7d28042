import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createTestBus,
  createTestDatabase,
  createTestRedis,
  eventually,
  exitOf,
  freePort,
  requestJson,
  testEnv,
  type HttpAnswer,
  type HttpRequestOptions,
  type TestBus,
  type TestDatabase,
  type TestRedis,
} from '@packetagent/testing';

const ROOT = resolve(__dirname, '../../../..');
const ENTRY = join(ROOT, 'dist/services/all-in-one/src/main.js');

/** Postgres, NATS and Redis shared by app processes, as replicas of one deployment share them. */
export interface SharedInfrastructure {
  db: TestDatabase;
  bus: TestBus;
  redis: TestRedis;
  dataDir: string;
  setupToken: string;
  cleanup(): Promise<void>;
}

export async function sharedInfrastructure(): Promise<SharedInfrastructure> {
  const db = await createTestDatabase();
  const bus = await createTestBus();
  const redis = await createTestRedis();
  const dataDir = mkdtempSync(join(tmpdir(), 'pa-proc-'));
  return {
    db,
    bus,
    redis,
    dataDir,
    setupToken: randomBytes(24).toString('base64url'),
    async cleanup() {
      await bus.cleanup().catch(() => undefined);
      await redis.cleanup().catch(() => undefined);
      await db.drop().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface AppProcess {
  name: string;
  baseUrl: string;
  child: ChildProcess;
  output(): string;
  request<T = Record<string, unknown>>(method: string, path: string, options?: HttpRequestOptions): Promise<HttpAnswer<T>>;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<number | null>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** The compiled all-in-one app (dist/) as a process of its own, on the shared infrastructure. */
export async function startAppProcess(infra: SharedInfrastructure, name: string, env: Record<string, string> = {}): Promise<AppProcess> {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: build first (node tools/dev/build.mjs)`);
  const port = await freePort();
  const child = spawn(process.execPath, [ENTRY], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      PACKETAGENT_PORT: String(port),
      PACKETAGENT_DATABASE_URL: infra.db.url,
      PACKETAGENT_NATS_URL: testEnv.natsUrl,
      PACKETAGENT_BUS_PREFIX: infra.bus.prefix,
      PACKETAGENT_REDIS_URL: infra.redis.url,
      PACKETAGENT_REDIS_KEY_PREFIX: infra.redis.keyPrefix,
      PACKETAGENT_DATA_DIR: infra.dataDir,
      PACKETAGENT_SETUP_TOKEN: infra.setupToken,
      PACKETAGENT_COOKIE_SECURE: 'false',
      PACKETAGENT_RELAY_POLL_MS: '50',
      PACKETAGENT_SUPERVISOR_LEASE_MS: '2000',
      PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS: '250',
      PACKETAGENT_LOG_FORMAT: 'json',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-32_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = exitOf(child).then((code) => {
    process.off('exit', killOnExit);
    return code;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const died = exited.then((code) => Promise.reject(new Error(`${name} exited with code ${String(code)} while starting:\n${output}`)));
  died.catch(() => undefined);
  const ready = eventually(async () => (await fetch(`${baseUrl}/readyz`).catch(() => null))?.status === 200, { timeoutMs: 60_000, intervalMs: 100, what: `${name} to be ready` });
  await Promise.race([ready, died]);
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    name,
    baseUrl,
    child,
    output: () => output,
    request: (method, path, options) => requestJson(baseUrl, method, path, options),
    exited,
    kill,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000).unref())]);
      if (!done) await kill();
    },
  };
}
