import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { EventRegistry } from '@packetagent/contracts';
import { ConsumerRunner, topology, type Topology } from '@packetagent/bus';
import { startTelemetry, withSpan, type Telemetry } from '@packetagent/telemetry';
import { createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from '@packetagent/testing';
import { PostgresEventStore } from './event-store';
import { OutboxRelay } from './relay/relay';

describe('trace propagation', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let db: TestDatabase;
  let bus: TestBus;
  let topo: Topology;

  beforeAll(async () => {
    telemetry = startTelemetry({ serviceName: 'test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
    db = await createTestDatabase();
    bus = await createTestBus();
    topo = topology(bus.prefix);
  });
  afterAll(async () => {
    await bus.cleanup();
    await db.drop();
    await telemetry.shutdown();
  });

  it('follows one request from the append through the relay to the consumer', async () => {
    const registry = new EventRegistry().register('test.happened', 1, z.object({ n: z.number() }));
    const store = new PostgresEventStore(db.pool, { registry });
    const relay = new OutboxRelay(db.pool, bus.nc, topo, { connectionString: db.url, pollIntervalMs: 50 });
    const consumed: string[] = [];
    const runner = new ConsumerRunner(bus.nc, topo, registry, async (event) => void consumed.push(event.traceparent ?? ''), { durable: 'traced' });
    await relay.start();
    await runner.start();

    const traceId = await withSpan('http POST /runs', {}, async (span) => {
      await store.append('test-traced', 'no_stream', [{ type: 'test.happened', data: { n: 1 }, actor: { kind: 'user', id: 'u1' } }], { workspaceId: 'ws1' });
      return span.spanContext().traceId;
    });
    await eventually(() => consumed.length === 1, { what: 'the consumer' });
    await runner.stop();
    await relay.stop();

    expect(consumed[0]).toContain(traceId);
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId).map((s) => s.name);
    expect(spans).toEqual(expect.arrayContaining(['http POST /runs', 'eventstore.append', 'consume test.happened']));
  });
});
