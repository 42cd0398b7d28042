import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { createPool } from './pool';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import { PostgresEventStore } from './event-store';
import { PayloadStore } from './payloads/payload-store';
import { PostgresPayloadStore } from './payloads/postgres-payload-store';
import { OutboxRelay, type RelayOptions } from './relay/relay';

export const PG_POOL = Symbol('PG_POOL');

export interface EventStoreModuleOptions {
  databaseUrl: string;
  poolSize?: number;
  maxEventBytes?: number;
  registry?: EventRegistry;
  /** Largest payload stored by reference, in bytes (default 32 MiB). */
  maxPayloadBytes?: number;
  /** Run the outbox relay in this process (it contends for leadership with other replicas). */
  relay?: Omit<RelayOptions, 'connectionString'> | false;
}

@Injectable()
class PoolCloser implements OnApplicationShutdown {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** Starts the relay after bootstrap and stops it before the pool and NATS close. */
@Injectable()
export class RelayHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(readonly relay: OutboxRelay) {}
  async onApplicationBootstrap(): Promise<void> {
    await this.relay.start();
  }
  async beforeApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}

@Module({})
export class EventStoreModule {
  static forRoot(options: EventStoreModuleOptions): DynamicModule {
    const relayProviders = options.relay
      ? [
          {
            provide: OutboxRelay,
            useFactory: (pool: Pool, nc: NatsConnection, topo: Topology) =>
              new OutboxRelay(pool, nc, topo, { ...(options.relay || {}), connectionString: options.databaseUrl }),
            inject: [PG_POOL, NATS_CONNECTION, BUS_TOPOLOGY],
          },
          RelayHost,
        ]
      : [];
    return {
      module: EventStoreModule,
      global: true,
      providers: [
        {
          provide: PG_POOL,
          useFactory: () => createPool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 }),
        },
        {
          provide: PostgresEventStore,
          useFactory: (pool: Pool) => new PostgresEventStore(pool, { maxEventBytes: options.maxEventBytes, registry: options.registry }),
          inject: [PG_POOL],
        },
        {
          provide: PayloadStore,
          useFactory: (pool: Pool) => new PostgresPayloadStore(pool, { maxBytes: options.maxPayloadBytes }),
          inject: [PG_POOL],
        },
        PoolCloser,
        ...relayProviders,
      ],
      exports: [PG_POOL, PostgresEventStore, PayloadStore, ...(options.relay ? [OutboxRelay] : [])],
    };
  }
}
