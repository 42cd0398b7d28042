import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createTestBus,
  createTestDatabase,
  createTestRedis,
  freePort,
  requestJson,
  startServerProcess,
  testEnv,
  type HttpAnswer,
  type HttpRequestOptions,
  type ServerProcess,
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

export interface AppProcess extends ServerProcess {
  name: string;
  baseUrl: string;
  request<T = Record<string, unknown>>(method: string, path: string, options?: HttpRequestOptions): Promise<HttpAnswer<T>>;
}

/** The compiled all-in-one app (dist/) as a process of its own, on the shared infrastructure. */
export async function startAppProcess(infra: SharedInfrastructure, name: string, env: Record<string, string> = {}): Promise<AppProcess> {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: build first (node tools/dev/build.mjs)`);
  const port = await freePort();
  const grpcPort = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = await startServerProcess({
    name,
    entry: ENTRY,
    cwd: ROOT,
    readyUrl: `${baseUrl}/readyz`,
    env: {
      PATH: process.env['PATH'] ?? '',
      PACKETAGENT_PORT: String(port),
      PACKETAGENT_GRPC_PORT: String(grpcPort),
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
  });
  return { name, baseUrl, ...started, request: (method, path, options) => requestJson(baseUrl, method, path, options) };
}
