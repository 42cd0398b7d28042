import { Module, type DynamicModule } from '@nestjs/common';
import { BusModule, topology } from '@packetagent/bus';
import { EventStoreModule } from '@packetagent/eventstore';
import { eventRegistry } from './event-registry';
import type { Env } from './env';
import { HealthController } from './health/health.controller';
import { ReadinessService } from './health/readiness.service';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsService } from './metrics/metrics.service';
import { ENV } from './tokens';

/**
 * Every service module in one process, for a laptop. Later services join by adding their
 * module here; they talk over NATS and Postgres exactly as they do when deployed apart.
 */
@Module({})
export class AppModule {
  static forRoot(env: Env, log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void): DynamicModule {
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
      ],
      controllers: [HealthController, MetricsController],
      providers: [{ provide: ENV, useValue: env }, ReadinessService, MetricsService],
    };
  }
}
