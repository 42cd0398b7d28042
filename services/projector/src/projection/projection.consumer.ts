import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { BUS_TOPOLOGY, BusHeaders, ConsumerRunner, EVENT_REGISTRY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import { decodeForProjection, type Decoded } from '@packetagent/projections';
import { PROJECTOR_OPTIONS, type ResolvedProjectorOptions } from '../projector.options';
import { ProjectEvent } from './usecases/project-event/project-event';

export const PROJECTOR_DURABLE = 'projector';

/**
 * One ordered durable consumer of every event. Its decoder never refuses a message: what the
 * registry cannot decode becomes a gap the projections record, instead of a dead letter they
 * would never hear of. One message in flight at a time keeps the stream's order.
 */
@Injectable()
export class ProjectionConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private runner: ConsumerRunner<Decoded> | null = null;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    private readonly projectEvent: ProjectEvent,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.consume) return;
    this.runner = new ConsumerRunner<Decoded>(this.nc, this.topo, (message) => this.decode(message), async (decoded) => {
      await this.projectEvent.execute(decoded);
    }, { durable: PROJECTOR_DURABLE, filter: '>', maxAckPending: 1, concurrency: 1, maxDeliver: 10, log: this.options.log });
    await this.runner.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.runner?.stop();
    this.runner = null;
  }

  private decode(message: JsMsg): Decoded {
    const position = Number(message.headers?.get(BusHeaders.GlobalPosition) ?? 0);
    const workspace = message.subject.slice(this.topo.eventsSubjectRoot.length + 1).split('.')[0] || null;
    return decodeForProjection(this.registry, () => message.json(), {
      globalPosition: Number.isSafeInteger(position) && position > 0 ? position : null,
      workspaceId: workspace,
      type: message.headers?.get(BusHeaders.EventType) || null,
    });
  }
}
