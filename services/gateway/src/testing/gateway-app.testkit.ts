import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module, type DynamicModule, type LoggerService, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Redis } from 'ioredis';
import { v7 as uuidv7 } from 'uuid';
import { BusModule, topology } from '@packetagent/bus';
import { EventRegistry, registerIdentityEvents } from '@packetagent/contracts';
import { EventStoreModule } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, freePort, requestJson, testEnv, type HttpAnswer, type TestBus, type TestDatabase } from '@packetagent/testing';
import { configureGatewayApp } from '../configure-app';
import { GatewayModule } from '../gateway.module';
import { withFrameworkErrorAnswers } from '../http/framework-errors';
import type { GatewayOptions } from '../gateway.options';
import { hashPassword } from '../identity/passwords';

export const TEST_REDIS_URL = process.env['PACKETAGENT_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Every line the app logged, so tests can assert what is (and is not) written. */
export class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push({ level: 'error', message: [message, ...rest].map(String).join(' ') });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  debug(message: unknown): void {
    this.lines.push({ level: 'debug', message: String(message) });
  }
  verbose(message: unknown): void {
    this.lines.push({ level: 'verbose', message: String(message) });
  }
  text(): string {
    return this.lines.map((line) => `${line.level} ${line.message}`).join('\n');
  }
}

export type { HttpAnswer } from '@packetagent/testing';

export interface GatewayTestApp {
  app: NestFastifyApplication;
  baseUrl: string;
  db: TestDatabase;
  dataDir: string;
  redisKeyPrefix: string;
  logger: CapturingLogger;
  request<T = Record<string, unknown>>(method: string, path: string, options?: { body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<HttpAnswer<T>>;
  /** Restarts the app on the same database, Redis prefix and data directory. */
  restart(overrides?: Partial<GatewayOptions>): Promise<void>;
  close(): Promise<void>;
}

/**
 * The gateway in-process on a free port with the real Fastify adapter, a fresh database, its
 * own bus prefix and Redis key prefix, as all-in-one composes it.
 */
export async function startGatewayTestApp(
  options: { gateway?: Partial<GatewayOptions>; controllers?: Type[]; modules?: DynamicModule[]; bodyLimitBytes?: number } = {},
): Promise<GatewayTestApp> {
  const db = await createTestDatabase();
  const bus: TestBus = await createTestBus();
  const dataDir = mkdtempSync(join(tmpdir(), 'pa-gateway-'));
  const redisKeyPrefix = `test:${randomBytes(6).toString('hex')}:`;
  const logger = new CapturingLogger();
  const registry = registerIdentityEvents(new EventRegistry());
  let app: NestFastifyApplication | null = null;
  let baseUrl = '';

  const start = async (overrides: Partial<GatewayOptions> = {}) => {
    const gatewayOptions: GatewayOptions = { redisUrl: TEST_REDIS_URL, dataDir, cookieSecure: false, redisKeyPrefix, ...options.gateway, ...overrides };
    @Module({})
    class TestRootModule {
      static forRoot(): DynamicModule {
        return {
          module: TestRootModule,
          imports: [
            BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: 'gateway-test', topology: topology(bus.prefix), registry }),
            EventStoreModule.forRoot({ databaseUrl: db.url, registry, poolSize: 5 }),
            GatewayModule.forRoot(gatewayOptions),
            ...(options.modules ?? []),
          ],
          controllers: options.controllers ?? [],
        };
      }
    }
    const created = await NestFactory.create<NestFastifyApplication>(TestRootModule.forRoot(), new FastifyAdapter(withFrameworkErrorAnswers({ bodyLimit: options.bodyLimitBytes ?? 1_048_576 })), {
      logger,
      abortOnError: false,
    });
    await configureGatewayApp(created, { publicUrl: gatewayOptions.publicUrl });
    const port = await freePort();
    await created.listen(port, '127.0.0.1');
    app = created;
    baseUrl = `http://127.0.0.1:${port}`;
  };

  await start();

  return {
    get app() {
      return app as NestFastifyApplication;
    },
    get baseUrl() {
      return baseUrl;
    },
    db,
    dataDir,
    redisKeyPrefix,
    logger,
    request<T>(method: string, path: string, request: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) {
      return requestJson<T>(baseUrl, method, path, { body: request.body, raw: request.rawBody, headers: request.headers });
    },
    async restart(overrides?: Partial<GatewayOptions>) {
      await app?.close();
      await start(overrides);
    },
    async close() {
      await app?.close();
      await bus.cleanup().catch(() => undefined);
      await db.drop().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
      const redis = new Redis(TEST_REDIS_URL);
      try {
        const keys = await redis.keys(`${redisKeyPrefix}*`);
        if (keys.length) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    },
  };
}

/** The `pa_session` value from a response's Set-Cookie header. */
export function sessionCookieOf(answer: HttpAnswer<unknown>): string | null {
  for (const cookie of answer.headers.getSetCookie()) {
    const match = /^pa_session=([^;]*)/.exec(cookie);
    if (match) return match[1] || null;
  }
  return null;
}

export const OWNER_PASSWORD = 'correct horse battery staple';

/** Completes first-run setup with the token from the file; the owner's e-mail is `owner@example.com`. */
export async function completeSetup(sut: GatewayTestApp, email = 'owner@example.com'): Promise<{ workspaceId: string; apiKey: string; email: string; password: string }> {
  const token = readFileSync(join(sut.dataDir, 'setup-token'), 'utf8').trim();
  const answer = await sut.request<{ workspaceId: string; apiKey: string }>('POST', '/api/v1/setup', {
    body: { token, email, password: OWNER_PASSWORD, workspace: 'First' },
  });
  if (answer.status !== 201) throw new Error(`setup failed: ${answer.status} ${answer.text}`);
  return { ...answer.body, email, password: OWNER_PASSWORD };
}

export interface SignedIn {
  cookie: string;
  csrfToken: string;
  totpRequired: boolean;
  /** Headers for a cookie-authenticated request (with the CSRF header unless `csrf` is false). */
  headers(csrf?: boolean): Record<string, string>;
}

export function signedIn(sessionId: string, csrfToken: string, totpRequired = false): SignedIn {
  return {
    cookie: sessionId,
    csrfToken,
    totpRequired,
    headers: (csrf = true) => ({ cookie: `pa_session=${sessionId}`, ...(csrf ? { 'x-csrf-token': csrfToken } : {}) }),
  };
}

export async function signIn(sut: GatewayTestApp, email: string, password: string): Promise<SignedIn> {
  const answer = await sut.request<{ csrfToken: string; totpRequired: boolean }>('POST', '/api/v1/auth/login', { body: { email, password } });
  const sessionId = sessionCookieOf(answer);
  if (answer.status !== 200 || !sessionId) throw new Error(`login failed: ${answer.status} ${answer.text}`);
  return signedIn(sessionId, answer.body.csrfToken, answer.body.totpRequired);
}

/** A user with no membership anywhere, inserted directly (there is no sign-up route). */
export async function insertUser(sut: GatewayTestApp, email: string, password: string): Promise<string> {
  const id = uuidv7();
  await sut.db.pool.query(`INSERT INTO identity.users (id, email, password_hash) VALUES ($1, $2, $3)`, [id, email, await hashPassword(password)]);
  return id;
}
