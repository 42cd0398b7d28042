import {
  Inject,
  Injectable,
  Module,
  SetMetadata,
  type DynamicModule,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import type { EventRegistry } from '@packetagent/contracts';
import { CommandBus, type CommandDefinition } from './commands';
import { connectNats } from './connection';
import { ConsumerRunner, type ConsumerRunnerOptions } from './consumer-runner';
import type { Topology } from './topology';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');
export const BUS_TOPOLOGY = Symbol('BUS_TOPOLOGY');
export const EVENT_REGISTRY = Symbol('EVENT_REGISTRY');

const EVENT_HANDLER = 'packetagent:event-handler';
const COMMAND_HANDLER = 'packetagent:command-handler';

/** Marks a provider method as the handler of a durable JetStream consumer. */
export const OnEvent = (options: ConsumerRunnerOptions) => SetMetadata(EVENT_HANDLER, options);

/** Marks a provider method as the handler of a command. */
export const OnCommand = (command: CommandDefinition<z.ZodType, z.ZodType>) => SetMetadata(COMMAND_HANDLER, command);

export interface BusModuleOptions {
  natsUrl: string;
  serviceName: string;
  topology: Topology;
  registry: EventRegistry;
}

/** Finds @OnEvent / @OnCommand methods, starts them after bootstrap, drains them and the connection on shutdown. */
@Injectable()
export class BusExplorer implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly runners: ConsumerRunner[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    private readonly commands: CommandBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[methodName] as (...args: unknown[]) => Promise<unknown>;
        const eventOptions = Reflect.getMetadata(EVENT_HANDLER, method) as ConsumerRunnerOptions | undefined;
        if (eventOptions) {
          const runner = new ConsumerRunner(this.nc, this.topo, this.registry, (event, context) => method.call(instance, event, context) as Promise<void>, eventOptions);
          await runner.start();
          this.runners.push(runner);
        }
        const command = Reflect.getMetadata(COMMAND_HANDLER, method) as CommandDefinition<z.ZodType, z.ZodType> | undefined;
        if (command) this.commands.handle(command, (request, context) => method.call(instance, request, context));
      }
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.runners.splice(0).map((runner) => runner.stop()));
    await this.commands.drain();
  }

  /** Runs after every module's beforeApplicationShutdown, so nothing still needs the connection. */
  async onApplicationShutdown(): Promise<void> {
    await this.nc.drain().catch(() => undefined);
  }
}

@Module({})
export class BusModule {
  static forRoot(options: BusModuleOptions): DynamicModule {
    return {
      module: BusModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [
        { provide: NATS_CONNECTION, useFactory: () => connectNats({ url: options.natsUrl, name: options.serviceName }) },
        { provide: BUS_TOPOLOGY, useValue: options.topology },
        { provide: EVENT_REGISTRY, useValue: options.registry },
        {
          provide: CommandBus,
          useFactory: (nc: NatsConnection) => new CommandBus(nc, options.topology),
          inject: [NATS_CONNECTION],
        },
        BusExplorer,
      ],
      exports: [NATS_CONNECTION, BUS_TOPOLOGY, EVENT_REGISTRY, CommandBus],
    };
  }
}
