import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleLogger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  createTestBus,
  createTestDatabase,
  createTestRedis,
  freePort,
  requestJson,
  testEnv,
  type HttpAnswer,
  type HttpRequestOptions,
  type TestBus,
  type TestDatabase,
  type TestRedis,
} from '@packetagent/testing';
import { createApp, listenApp } from '../app.factory';
import { parseEnv } from '../env';

export type Answer<T = Record<string, unknown>> = HttpAnswer<T>;

export interface TestApp {
  app: NestFastifyApplication;
  baseUrl: string;
  db: TestDatabase;
  bus: TestBus;
  redis: TestRedis;
  /** host:port of the PacketADE gRPC door. */
  grpcAddress: string;
  dataDir: string;
  setupToken: string;
  request<T = Record<string, unknown>>(method: string, path: string, options?: HttpRequestOptions): Promise<Answer<T>>;
  /** Stops this app only (idempotent); its infrastructure stays for other replicas. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The all-in-one app in-process, built by the same factory as main.ts, on a fresh database,
 * bus prefix, Redis key prefix and data directory, listening on a free port.
 */
export async function startTestApp(overrides: Record<string, string> = {}, replicaOf?: TestApp, options: { freshBus?: boolean } = {}): Promise<TestApp> {
  // A replica shares the first app's database, bus, Redis and data directory, as replicas in
  // a deployment share their infrastructure; only the first app removes them. With `freshBus`
  // it gets a JetStream of its own, empty: an installation whose NATS lost everything.
  const db = replicaOf?.db ?? (await createTestDatabase());
  const ownBus = !replicaOf || options.freshBus === true;
  const bus = ownBus ? await createTestBus() : replicaOf.bus;
  const redis: TestRedis = replicaOf?.redis ?? (await createTestRedis());
  const dataDir = replicaOf?.dataDir ?? mkdtempSync(join(tmpdir(), 'pa-app-'));
  const setupToken = replicaOf?.setupToken ?? randomBytes(24).toString('base64url');
  const port = overrides['PACKETAGENT_PORT'] ? Number(overrides['PACKETAGENT_PORT']) : await freePort();
  const grpcPort = overrides['PACKETAGENT_GRPC_PORT'] ? Number(overrides['PACKETAGENT_GRPC_PORT']) : await freePort();
  const env = parseEnv({
    PACKETAGENT_PORT: String(port),
    PACKETAGENT_GRPC_PORT: String(grpcPort),
    PACKETAGENT_DATABASE_URL: db.url,
    PACKETAGENT_NATS_URL: testEnv.natsUrl,
    PACKETAGENT_BUS_PREFIX: bus.prefix,
    PACKETAGENT_REDIS_URL: redis.url,
    PACKETAGENT_REDIS_KEY_PREFIX: redis.keyPrefix,
    PACKETAGENT_DATA_DIR: dataDir,
    PACKETAGENT_SETUP_TOKEN: setupToken,
    PACKETAGENT_COOKIE_SECURE: 'false',
    PACKETAGENT_RELAY_POLL_MS: '50',
    PACKETAGENT_RELAY_VERIFY_INTERVAL_MS: '0',
    PACKETAGENT_SCHEDULER_LEADER_RETRY_MS: '200',
    // Control-plane suites keep runs where admission put them; execution suites turn it on.
    PACKETAGENT_SUPERVISOR_ENABLED: 'false',
    ...overrides,
  });
  const logger = new ConsoleLogger('test', { logLevels: ['error'] });
  const app = await createApp(env, logger, () => undefined);
  await listenApp(app, port, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= app.close());
  return {
    app,
    baseUrl,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    db,
    bus,
    redis,
    dataDir,
    setupToken,
    request: (method, path, options) => requestJson(baseUrl, method, path, options),
    stop,
    async close() {
      await stop();
      if (replicaOf) {
        if (ownBus) await bus.cleanup().catch(() => undefined);
        return;
      }
      await bus.cleanup().catch(() => undefined);
      await redis.cleanup().catch(() => undefined);
      await db.drop().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
