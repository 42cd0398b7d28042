import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { z } from 'zod';
import { computeEventDigest, EventRegistry, newEventId, type DecodedEvent } from '@packetagent/contracts';
import { createTestBus, eventually, testEnv, type TestBus } from '@packetagent/testing';
import { CommandBus, defineCommand } from './commands';
import { BusModule, OnCommand, OnEvent } from './nest';
import { ensureEventsStream } from './provisioning';
import { topology, type Topology } from './topology';

const ping = defineCommand('test.ping', z.object({ n: z.number() }), z.object({ n: z.number() }));
const registry = new EventRegistry().register('test.happened', 1, z.object({ n: z.number() }));

@Injectable()
class Handlers {
  readonly seen: number[] = [];

  @OnEvent({ durable: 'nest-test' })
  async onHappened(event: DecodedEvent<{ n: number }>): Promise<void> {
    this.seen.push(event.data.n);
  }

  @OnCommand(ping)
  async onPing(request: { n: number }): Promise<{ n: number }> {
    return { n: request.n + 1 };
  }
}

describe(BusModule.name, () => {
  let bus: TestBus;
  let topo: Topology;
  beforeEach(async () => {
    bus = await createTestBus();
    topo = topology(bus.prefix);
    await ensureEventsStream(await jetstreamManager(bus.nc), topo);
  });
  afterEach(() => bus.cleanup());

  it('runs the handlers a provider declares and drains them when the app closes', async () => {
    @Module({
      imports: [BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: 'test', topology: topo, registry })],
      providers: [Handlers],
    })
    class AppModule {}
    const app = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await app.init();
    const handlers = app.get(Handlers);

    const body = {
      id: newEventId(), type: 'test.happened', schemaVersion: 1, stream: 'test-1', streamVersion: 1, workspaceId: 'ws1',
      occurredAt: new Date().toISOString(), causationId: null, correlationId: null, traceparent: null,
      actor: { kind: 'system' as const, id: 't' }, data: { n: 41 }, prevDigest: null,
    };
    await jetstream(bus.nc).publish(`${topo.eventsSubjectRoot}.ws1.test.test.happened`, JSON.stringify({ ...body, globalPosition: 1, digest: computeEventDigest(body) }));
    await eventually(() => handlers.seen.length === 1, { what: 'the event handler' });
    expect(handlers.seen).toEqual([41]);

    await expect(app.get(CommandBus).request(ping, { n: 1 })).resolves.toEqual({ n: 2 });
    await app.close();
  });
});
