import { headers as natsHeaders } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { z } from 'zod';
import {
  computeEventDigest,
  DomainError,
  EventRegistry,
  newEventId,
  TransientError,
  type DecodedEvent,
  type EventEnvelope,
} from '@packetagent/contracts';
import { createTestBus, eventually, type TestBus } from '@packetagent/testing';
import { ConsumerRunner } from './consumer-runner';
import { BusHeaders } from './headers';
import { ensureEventsStream } from './provisioning';
import { topology, type Topology } from './topology';

class RuleViolatedError extends DomainError {
  readonly code = 'rule_violated';
}

let position = 0;
function envelope(type: string, schemaVersion: number, data: Record<string, unknown>): EventEnvelope {
  const body = {
    id: newEventId(),
    type,
    schemaVersion,
    stream: 'run-1',
    streamVersion: ++position,
    workspaceId: 'ws1',
    occurredAt: new Date().toISOString(),
    causationId: null,
    correlationId: null,
    traceparent: null,
    actor: { kind: 'system' as const, id: 'test' },
    data: data as never,
    prevDigest: null,
  };
  return { ...body, globalPosition: position, digest: computeEventDigest(body) };
}

describe(ConsumerRunner.name, () => {
  let bus: TestBus;
  let topo: Topology;
  const registry = new EventRegistry()
    .register('run.started', 1, z.object({ input: z.string() }))
    .register('run.started', 2, z.object({ input: z.string(), attempt: z.number() }), (v1: { input: string }) => ({ ...v1, attempt: 1 }));

  beforeEach(async () => {
    bus = await createTestBus();
    topo = topology(bus.prefix);
    await ensureEventsStream(await jetstreamManager(bus.nc), topo);
  });
  afterEach(() => bus.cleanup());

  const publish = async (payload: unknown, raw = false) => {
    const h = natsHeaders();
    const event = payload as EventEnvelope;
    if (event.id) h.set(BusHeaders.EventId, event.id);
    await jetstream(bus.nc).publish(`${topo.eventsSubjectRoot}.ws1.run.run.started`, raw ? (payload as string) : JSON.stringify(payload), { headers: h });
  };

  const deadLetters = async (): Promise<JsMsg[]> => {
    const consumer = await jetstream(bus.nc).consumers.get(topo.deadLetterStream);
    const out: JsMsg[] = [];
    const info = await (await jetstreamManager(bus.nc)).streams.info(topo.deadLetterStream);
    if (info.state.messages === 0) return out;
    const batch = await consumer.fetch({ max_messages: info.state.messages, expires: 1_000 });
    for await (const message of batch) out.push(message);
    return out;
  };

  it('upcasts old versions, dead-letters unknown types, newer versions and malformed messages, and goes on', async () => {
    const handled: DecodedEvent[] = [];
    const sut = new ConsumerRunner(bus.nc, topo, registry, async (event) => void handled.push(event), { durable: 'projector' });
    await sut.start();

    await publish(envelope('run.started', 1, { input: 'old' }));
    await publish(envelope('run.vanished', 1, {}));
    await publish(envelope('run.started', 3, { input: 'future' }));
    await publish('{not json', true);
    await publish(envelope('run.started', 2, { input: 'bad', attempt: 'x' }));
    await publish(envelope('run.started', 2, { input: 'new', attempt: 2 }));

    await eventually(() => handled.length === 2, { what: 'the two valid events' });
    await sut.stop();

    expect(handled.map((e) => [e.data, e.schemaVersion, e.storedSchemaVersion])).toEqual([
      [{ input: 'old', attempt: 1 }, 2, 1],
      [{ input: 'new', attempt: 2 }, 2, 2],
    ]);
    const parked = await eventually(async () => {
      const messages = await deadLetters();
      return messages.length === 4 && messages;
    }, { what: 'four dead letters' });
    expect(parked.map((m) => m.headers?.get(BusHeaders.DeadLetterCode))).toEqual([
      'unknown_event_type',
      'unsupported_schema_version',
      'malformed_json',
      'event_schema_mismatch',
    ]);
    expect(parked[1]!.headers?.get(BusHeaders.DeadLetterReason)).toMatch(/schema version 3 is not known \(latest known: 2\)/);
    expect(parked[0]!.headers?.get(BusHeaders.DeadLetterConsumer)).toBe('projector');
    expect(parked[0]!.subject).toBe(`${topo.deadLetterSubjectRoot}.projector`);
  });

  it('redelivers after a transient failure and dead-letters a permanent one', async () => {
    const attempts = new Map<string, number>();
    const handled: string[] = [];
    const sut = new ConsumerRunner(
      bus.nc,
      topo,
      registry,
      async (event) => {
        const data = event.data as { input: string };
        const n = (attempts.get(data.input) ?? 0) + 1;
        attempts.set(data.input, n);
        if (data.input === 'flaky' && n < 3) throw new TransientError('database briefly unavailable');
        if (data.input === 'broken') throw new RuleViolatedError('cannot apply');
        handled.push(data.input);
      },
      { durable: 'worker', backoffMs: [10] },
    );
    await sut.start();
    await publish(envelope('run.started', 2, { input: 'flaky', attempt: 1 }));
    await publish(envelope('run.started', 2, { input: 'broken', attempt: 1 }));
    await publish(envelope('run.started', 2, { input: 'fine', attempt: 1 }));

    await eventually(() => handled.length === 2, { what: 'flaky and fine handled' });
    await sut.stop();
    expect(handled).toEqual(['flaky', 'fine']);
    expect(attempts.get('flaky')).toBe(3);
    expect(attempts.get('broken')).toBe(1);
    const parked = await eventually(async () => {
      const messages = await deadLetters();
      return messages.length === 1 && messages;
    });
    expect(parked[0]!.headers?.get(BusHeaders.DeadLetterCode)).toBe('rule_violated');
  });

  it('finishes the message in hand before stop() returns', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const sut = new ConsumerRunner(bus.nc, topo, registry, async () => {
      await gate;
      finished = true;
    }, { durable: 'slow' });
    await sut.start();
    await publish(envelope('run.started', 2, { input: 'x', attempt: 1 }));
    const jsm = await jetstreamManager(bus.nc);
    await eventually(async () => (await jsm.consumers.info(topo.eventsStream, 'slow')).num_ack_pending === 1, { what: 'delivery' });

    const stopping = sut.stop();
    release();
    await stopping;

    expect(finished).toBe(true);
    const info = await jsm.consumers.info(topo.eventsStream, 'slow');
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
  });

  it('handles up to `concurrency` messages at once and drains them all on stop', async () => {
    let inFlight = 0;
    let most = 0;
    let handled = 0;
    let holding = true;
    const held: Array<() => void> = [];
    const sut = new ConsumerRunner(
      bus.nc,
      topo,
      registry,
      async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (holding) await new Promise<void>((resolve) => held.push(resolve));
        inFlight -= 1;
        handled += 1;
      },
      { durable: 'wide', maxAckPending: 8, concurrency: 3 },
    );
    await sut.start();
    for (let i = 0; i < 6; i++) await publish(envelope('run.started', 1, { input: `n${i}` }));

    await eventually(() => held.length === 3, { what: 'three messages in hand' });
    expect(inFlight).toBe(3);
    holding = false;
    held.splice(0).forEach((release) => release());
    await eventually(() => handled === 6, { what: 'every message handled' });
    await sut.stop();
    expect(most).toBe(3);
    const info = await (await jetstreamManager(bus.nc)).consumers.info(topo.eventsStream, 'wide');
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
  });

  it('hands a deferred message back for later without dead-lettering it, however often', async () => {
    const seen: number[] = [];
    const sut = new ConsumerRunner(
      bus.nc,
      topo,
      registry,
      async (_event, context) => {
        seen.push(context.deliveryCount);
        if (context.deliveryCount < 7) context.defer(10);
      },
      { durable: 'patient', maxDeliver: 3 },
    );
    await sut.start();
    await publish(envelope('run.started', 1, { input: 'later' }));

    await eventually(() => seen.length === 7, { what: 'seven deliveries' });
    await sut.stop();
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await deadLetters()).toEqual([]);
  });
});
