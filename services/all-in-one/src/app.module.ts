import { Module, type DynamicModule } from '@nestjs/common';
import { BusModule, topology } from '@packetagent/bus';
import { EventStoreModule } from '@packetagent/eventstore';
import { randomBytes } from 'node:crypto';
import { BudgetModule } from '@packetagent/budget';
import { AttentionRoutesModule, BudgetsRoutesModule, ControlPlaneModule, CredentialsRoutesModule, GatewayModule } from '@packetagent/gateway';
import { ConsoleModule } from '@packetagent/gateway';
import { AuditRoutesModule, LiveRoutesModule } from '@packetagent/gateway';
import { OperationsRoutesModule } from '@packetagent/gateway';
import { MigrationRoutesModule } from '@packetagent/gateway';
import { SupervisionRoutesModule } from '@packetagent/gateway';
import { ComputersRoutesModule, NotificationsRoutesModule, PacketAdeRoutesModule, SandboxRoutesModule } from '@packetagent/gateway';
import { ProjectorModule } from '@packetagent/projector';
import { IntakeModule } from '@packetagent/intake';
import { PolicyModule } from '@packetagent/policy';
import { SchedulerModule } from '@packetagent/scheduler';
import { SupervisorModule } from '@packetagent/supervisor';
import { CrashAfterAppend } from './testing/crash-after-append';
import { VaultModule } from '@packetagent/vault';
import { SandboxModule } from '@packetagent/sandbox';
import { NotificationsModule } from '@packetagent/notifications';
import { callbackSigningKey } from './callback-signing-key';
import { eventRegistry } from './event-registry';
import type { Env } from './env';
import { HealthController } from './health/health.controller';
import { ReadinessService } from './health/readiness.service';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsService } from './metrics/metrics.service';
import { ENV } from './tokens';

function commaList(value: string): string[] {
  return value.split(',').map((item) => item.trim()).filter(Boolean);
}

export type Log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

/**
 * Every service module in one process, for a laptop. They talk over NATS and Postgres exactly
 * as they do when deployed apart: the gateway reaches intake by request/reply, the scheduler
 * fires ticks the same way, and events travel through the relay.
 */
@Module({})
export class AppModule {
  static forRoot(env: Env, log: Log): DynamicModule {
    // Policy signs credential grants and the vault verifies them: one key for both. In one
    // process a key of its own is enough (grants live a minute); separate services share the seed.
    const grantSigningKey = env.PACKETAGENT_GRANT_SIGNING_KEY ?? randomBytes(32).toString('base64url');
    return {
      module: AppModule,
      imports: [
        BusModule.forRoot({ natsUrl: env.PACKETAGENT_NATS_URL, serviceName: 'all-in-one', topology: topology(env.PACKETAGENT_BUS_PREFIX), registry: eventRegistry }),
        EventStoreModule.forRoot({
          databaseUrl: env.PACKETAGENT_DATABASE_URL,
          poolSize: env.PACKETAGENT_DATABASE_POOL_SIZE,
          maxEventBytes: env.PACKETAGENT_MAX_EVENT_BYTES,
          registry: eventRegistry,
          relay: {
            pollIntervalMs: env.PACKETAGENT_RELAY_POLL_MS,
            batchSize: env.PACKETAGENT_RELAY_BATCH_SIZE,
            verifyIntervalMs: env.PACKETAGENT_RELAY_VERIFY_INTERVAL_MS,
            stream: { replicas: env.PACKETAGENT_NATS_REPLICAS },
            log,
          },
        }),
        GatewayModule.forRoot({
          redisUrl: env.PACKETAGENT_REDIS_URL,
          dataDir: env.PACKETAGENT_DATA_DIR,
          setupToken: env.PACKETAGENT_SETUP_TOKEN,
          cookieSecure: env.PACKETAGENT_COOKIE_SECURE,
          sessionTtlSeconds: env.PACKETAGENT_SESSION_TTL_SECONDS,
          publicUrl: env.PACKETAGENT_PUBLIC_URL,
          redisKeyPrefix: env.PACKETAGENT_REDIS_KEY_PREFIX,
        }),
        ControlPlaneModule,
        AttentionRoutesModule,
        BudgetsRoutesModule,
        CredentialsRoutesModule,
        ConsoleModule.forRoot({ directory: env.PACKETAGENT_CONSOLE_DIR }),
        AuditRoutesModule,
        LiveRoutesModule.forRoot({
          heartbeatMs: env.PACKETAGENT_SSE_HEARTBEAT_MS,
          bufferEvents: env.PACKETAGENT_SSE_BUFFER_EVENTS,
          maxConnectionsPerWorkspace: env.PACKETAGENT_SSE_MAX_CONNECTIONS_PER_WORKSPACE,
        }),
        PacketAdeRoutesModule.forRoot({
          heartbeatMs: env.PACKETAGENT_SSE_HEARTBEAT_MS,
          maxConnectionsPerWorkspace: env.PACKETAGENT_SSE_MAX_CONNECTIONS_PER_WORKSPACE,
        }),
        OperationsRoutesModule,
        NotificationsRoutesModule,
        MigrationRoutesModule,
        SupervisionRoutesModule,
        SandboxRoutesModule.forRoot({ heartbeatMs: env.PACKETAGENT_SSE_HEARTBEAT_MS, maxStreamsPerWorkspace: env.PACKETAGENT_SSE_MAX_CONNECTIONS_PER_WORKSPACE }),
        ComputersRoutesModule.forRoot({ connectTimeoutMs: env.PACKETAGENT_COMPUTER_CONNECT_TIMEOUT_MS }),
        ProjectorModule.forRoot({ log }),
        IntakeModule.forRoot({ inlineInputBytes: env.PACKETAGENT_INLINE_INPUT_BYTES, maxInputBytes: env.PACKETAGENT_MAX_INPUT_BYTES }),
        PolicyModule.forRoot({
          grantSigningKey,
          defaultApprovalTimeoutSeconds: env.PACKETAGENT_APPROVAL_TIMEOUT_SECONDS,
          credentialGrantTtlSeconds: env.PACKETAGENT_CREDENTIAL_GRANT_TTL_SECONDS,
          log,
        }),
        BudgetModule.forRoot({ sweepIntervalMs: env.PACKETAGENT_BUDGET_SWEEP_INTERVAL_MS, warningPercent: env.PACKETAGENT_BUDGET_WARNING_PERCENT }),
        VaultModule.forRoot({
          mode: env.PACKETAGENT_VAULT_MODE,
          masterKeys: env.PACKETAGENT_MASTER_KEY ? env.PACKETAGENT_MASTER_KEY.split(',').map((key) => key.trim()) : undefined,
          masterKeyFile: env.PACKETAGENT_MASTER_KEY_FILE,
          oauth: { allowPrivate: commaList(env.PACKETAGENT_HTTP_ALLOW_PRIVATE), refreshMarginSeconds: env.PACKETAGENT_OAUTH_REFRESH_MARGIN_SECONDS },
          dataDir: env.PACKETAGENT_DATA_DIR,
          grantSigningKey,
          log,
        }),
        SandboxModule.forRoot({
          dataDir: env.PACKETAGENT_DATA_DIR,
          driver: env.PACKETAGENT_SANDBOX_DRIVER,
          defaults: { wallTimeMs: env.PACKETAGENT_SANDBOX_WALL_TIME_MS, memoryBytes: env.PACKETAGENT_SANDBOX_MEMORY_BYTES, pids: env.PACKETAGENT_SANDBOX_PIDS, outputBytes: env.PACKETAGENT_SANDBOX_OUTPUT_BYTES },
          maximum: {
            wallTimeMs: env.PACKETAGENT_SANDBOX_MAX_WALL_TIME_MS,
            memoryBytes: Math.max(env.PACKETAGENT_SANDBOX_MEMORY_BYTES, 8 * 1024 ** 3),
            pids: Math.max(env.PACKETAGENT_SANDBOX_PIDS, 4_096),
            outputBytes: Math.max(env.PACKETAGENT_SANDBOX_OUTPUT_BYTES, 512 * 1024 ** 2),
          },
          envAllowlist: commaList(env.PACKETAGENT_SANDBOX_ENV_ALLOWLIST),
          egressOrigins: commaList(env.PACKETAGENT_SANDBOX_EGRESS_ORIGINS),
          allowPrivate: commaList(env.PACKETAGENT_HTTP_ALLOW_PRIVATE),
          docker: { ...(env.PACKETAGENT_SANDBOX_DOCKER_HOST ? { host: env.PACKETAGENT_SANDBOX_DOCKER_HOST } : {}), image: env.PACKETAGENT_SANDBOX_DOCKER_IMAGE },
          chromiumPath: env.PACKETAGENT_CHROMIUM,
          computers: { probeIntervalMs: env.PACKETAGENT_COMPUTER_PROBE_INTERVAL_MS, staleAfterMs: env.PACKETAGENT_COMPUTER_STALE_AFTER_MS, connectTimeoutMs: env.PACKETAGENT_COMPUTER_CONNECT_TIMEOUT_MS },
          log,
        }),
        NotificationsModule.forRoot({
          callbackSigningKey: callbackSigningKey(env.PACKETAGENT_CALLBACK_SIGNING_KEY, env.PACKETAGENT_GRANT_SIGNING_KEY, env.PACKETAGENT_DATA_DIR),
          publicUrl: env.PACKETAGENT_PUBLIC_URL ?? `http://127.0.0.1:${env.PACKETAGENT_PORT}`,
          callbackTtlSeconds: env.PACKETAGENT_NOTIFY_CALLBACK_TTL_SECONDS,
          deliveryTtlSeconds: env.PACKETAGENT_NOTIFY_DELIVERY_TTL_SECONDS,
          retryBaseMs: env.PACKETAGENT_NOTIFY_RETRY_BASE_MS,
          retryMaxMs: env.PACKETAGENT_NOTIFY_RETRY_MAX_MS,
          leaseMs: env.PACKETAGENT_NOTIFY_LEASE_MS,
          attemptTimeoutMs: env.PACKETAGENT_NOTIFY_ATTEMPT_TIMEOUT_MS,
          concurrency: env.PACKETAGENT_NOTIFY_CONCURRENCY,
          credentialCacheSeconds: env.PACKETAGENT_NOTIFY_CREDENTIAL_CACHE_SECONDS,
          allowPrivate: commaList(env.PACKETAGENT_HTTP_ALLOW_PRIVATE),
          log,
        }),
        SchedulerModule.forRoot({
          tickToleranceMs: env.PACKETAGENT_SCHEDULER_TICK_TOLERANCE_MS,
          maxCatchUpMs: env.PACKETAGENT_SCHEDULER_MAX_CATCH_UP_MS,
          leaderRetryMs: env.PACKETAGENT_SCHEDULER_LEADER_RETRY_MS,
          activateTimeoutMs: env.PACKETAGENT_SCHEDULER_ACTIVATE_TIMEOUT_MS,
          log,
        }),
        ...(env.PACKETAGENT_SUPERVISOR_ENABLED
          ? [
              SupervisorModule.forRoot({
                leaseMs: env.PACKETAGENT_SUPERVISOR_LEASE_MS,
                concurrency: env.PACKETAGENT_SUPERVISOR_CONCURRENCY,
                recoveryIntervalMs: env.PACKETAGENT_SUPERVISOR_RECOVERY_INTERVAL_MS,
                watchdogIntervalMs: env.PACKETAGENT_SUPERVISOR_WATCHDOG_INTERVAL_MS,
                watchdogGraceMs: env.PACKETAGENT_SUPERVISOR_WATCHDOG_GRACE_MS,
                stallTurns: env.PACKETAGENT_SUPERVISOR_STALL_TURNS,
                payloadThresholdBytes: env.PACKETAGENT_SUPERVISOR_PAYLOAD_THRESHOLD_BYTES,
                dataDir: env.PACKETAGENT_DATA_DIR,
                ...(env.PACKETAGENT_FAULT_CRASH_AFTER ? { faults: new CrashAfterAppend(env.PACKETAGENT_FAULT_CRASH_AFTER) } : {}),
                providerEnv: env.providerEnv,
                tools: {
                  httpAllowPrivate: commaList(env.PACKETAGENT_HTTP_ALLOW_PRIVATE),
                  httpIdempotencyKeyOrigins: commaList(env.PACKETAGENT_HTTP_IDEMPOTENCY_KEY_ORIGINS),
                  httpMaxResponseBytes: env.PACKETAGENT_HTTP_MAX_RESPONSE_BYTES,
                  httpTimeoutMs: env.PACKETAGENT_HTTP_TIMEOUT_MS,
                  slackWebhookBaseUrl: env.PACKETAGENT_SLACK_WEBHOOK_BASE_URL,
                  githubBaseUrl: env.PACKETAGENT_GITHUB_BASE_URL,
                },
                log,
              }),
            ]
          : []),
      ],
      controllers: [HealthController, MetricsController],
      providers: [{ provide: ENV, useValue: env }, ReadinessService, MetricsService],
    };
  }
}
