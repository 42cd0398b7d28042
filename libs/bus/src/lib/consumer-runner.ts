import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import {
  DomainError,
  parseEnvelope,
  type DecodedEvent,
  type EventRegistry,
} from '@packetagent/contracts';
import { extractTraceContext, SpanKind, withSpan } from '@packetagent/telemetry';
import { BusHeaders } from './headers';
import { ensureDeadLetterStream, ensureDurableConsumer, ensureEventsStream, type DurableConsumerSpec } from './provisioning';
import type { Topology } from './topology';

export type EventHandler<T = unknown> = (event: DecodedEvent<T>, context: HandlerContext) => Promise<void>;

/** Turns a delivery into the handler's input; throwing refuses the message (dead-lettered with the reason). */
export type MessageDecoder<T> = (message: JsMsg) => T;

export interface HandlerContext {
  /** Tells JetStream the work goes on, so the delivery is not redelivered meanwhile. */
  working(): void;
  /**
   * Hands the message back to be delivered again after `delayMs` instead of acking it: for a
   * message that is not this consumer's to act on yet (e.g. another replica holds the run).
   */
  defer(delayMs: number): void;
  deliveryCount: number;
  subject: string;
}

export interface ConsumerRunnerOptions {
  durable: string;
  /**
   * Another stream than PA_EVENTS (with its subject root), for messages that are not event
   * envelopes, such as queue triggers; `provision` creates it before the consumer.
   */
  source?: { stream: string; subjectRoot: string; provision: (jsm: JetStreamManager) => Promise<unknown> };
  /** Subject filter below the events root, e.g. `*.run.>`; defaults to every event. */
  filter?: string;
  maxDeliver?: number;
  ackWaitMs?: number;
  maxAckPending?: number;
  /** Messages handled at once (at most maxAckPending); one by one by default, which keeps order. */
  concurrency?: number;
  /** Delay before redelivery after a transient failure, by attempt (last value repeats), in milliseconds. */
  backoffMs?: number[];
  log?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

/** Failure of the message itself; retrying cannot help, so it goes to the dead-letter subject. */
function isPermanent(error: unknown): boolean {
  return error instanceof DomainError && !error.retryable;
}

function describe(error: unknown): { code: string; reason: string } {
  if (error instanceof DomainError) return { code: error.code, reason: error.message };
  if (error instanceof SyntaxError) return { code: 'malformed_json', reason: error.message };
  return { code: 'handler_failed', reason: error instanceof Error ? error.message : String(error) };
}

/**
 * The one way services consume events: decode with the schema registry (failure: terminate
 * and dead-letter with the reason), run the handler inside the trace carried by the message,
 * ack on success, nak with backoff on a transient failure, keep long work alive with
 * working(), and drain in-flight work on stop.
 */
export class ConsumerRunner<T = DecodedEvent> {
  private messages: ConsumerMessages | null = null;
  private running: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly js: JetStreamClient;
  private readonly options: Required<Omit<ConsumerRunnerOptions, 'log' | 'filter' | 'source'>> &
    Pick<ConsumerRunnerOptions, 'log' | 'filter' | 'source'>;

  /** `decoder` is the event registry for PA_EVENTS, or a decoder for another source's messages. */
  constructor(
    private readonly nc: NatsConnection,
    private readonly topo: Topology,
    private readonly decoder: EventRegistry | MessageDecoder<T>,
    private readonly handler: (value: T, context: HandlerContext) => Promise<void>,
    options: ConsumerRunnerOptions,
  ) {
    this.js = jetstream(nc);
    this.options = {
      maxDeliver: 5,
      ackWaitMs: 30_000,
      maxAckPending: 1,
      concurrency: 1,
      backoffMs: [250, 1_000, 5_000, 15_000],
      ...options,
    };
  }

  consumerSpec(): DurableConsumerSpec {
    return {
      stream: this.options.source?.stream ?? this.topo.eventsStream,
      durable: this.options.durable,
      filterSubject: `${this.options.source?.subjectRoot ?? this.topo.eventsSubjectRoot}.${this.options.filter ?? '>'}`,
      ackWaitMs: this.options.ackWaitMs,
      maxAckPending: this.options.maxAckPending,
    };
  }

  async start(): Promise<void> {
    if (this.running) return;
    const jsm = await jetstreamManager(this.nc);
    if (this.options.source) await this.options.source.provision(jsm);
    else await ensureEventsStream(jsm, this.topo, { createOnly: true });
    await ensureDeadLetterStream(jsm, this.topo);
    const spec = this.consumerSpec();
    await ensureDurableConsumer(jsm, spec);
    const consumer = await this.js.consumers.get(spec.stream, this.options.durable);
    this.messages = await consumer.consume({ max_messages: Math.max(1, this.options.maxAckPending) });
    const messages = this.messages;
    this.running = (async () => {
      const limit = Math.max(1, Math.min(this.options.concurrency, this.options.maxAckPending));
      for await (const message of messages) {
        const work = this.process(message).finally(() => this.inFlight.delete(work));
        this.inFlight.add(work);
        if (this.inFlight.size >= limit) await Promise.race(this.inFlight);
      }
    })();
  }

  /** Stops pulling, lets the messages in hand finish, and returns. */
  async stop(): Promise<void> {
    if (!this.messages) return;
    await this.messages.close().catch(() => undefined);
    await Promise.all(this.inFlight);
    await this.running?.catch(() => undefined);
    this.messages = null;
    this.running = null;
  }

  private async process(message: JsMsg): Promise<void> {
    let value: T;
    try {
      value = typeof this.decoder === 'function' ? this.decoder(message) : (this.decoder.decode(parseEnvelope(message.json())) as T);
    } catch (error) {
      await this.deadLetter(message, error);
      return;
    }
    const parent = extractTraceContext(message.headers);
    const event = typeof this.decoder === 'function' ? null : (value as DecodedEvent);
    await withSpan(
      event ? `consume ${event.type}` : `consume ${message.subject}`,
      {
        kind: SpanKind.CONSUMER,
        parent,
        attributes: { 'pa.consumer': this.options.durable, ...(event ? { 'pa.global_position': event.globalPosition } : { 'pa.stream_seq': message.seq }) },
      },
      async () => {
        const keepAlive = setInterval(() => message.working(), Math.max(1_000, Math.floor(this.options.ackWaitMs / 2)));
        let deferMs: number | null = null;
        try {
          await this.handler(value, {
            working: () => message.working(),
            defer: (delayMs) => {
              deferMs = Math.max(0, delayMs);
            },
            deliveryCount: message.info.deliveryCount,
            subject: message.subject,
          });
          if (deferMs !== null) message.nak(deferMs);
          else await message.ackAck().catch(() => message.ack());
        } catch (error) {
          if (isPermanent(error) || message.info.deliveryCount >= this.options.maxDeliver) {
            await this.deadLetter(message, error);
          } else {
            const backoff = this.options.backoffMs;
            const delay = backoff[Math.min(message.info.deliveryCount - 1, backoff.length - 1)] ?? 1_000;
            this.log('warn', 'handler failed; will retry', { durable: this.options.durable, delay, ...describe(error) });
            message.nak(delay);
          }
        } finally {
          clearInterval(keepAlive);
        }
      },
    );
  }

  /** Copies the message to the dead-letter subject with the reason, then terminates it. */
  private async deadLetter(message: JsMsg, error: unknown): Promise<void> {
    const { code, reason } = describe(error);
    const h = natsHeaders();
    message.headers?.keys().forEach((key) => {
      if (key !== BusHeaders.MessageId) h.set(key, message.headers!.get(key));
    });
    h.set(BusHeaders.DeadLetterCode, code);
    h.set(BusHeaders.DeadLetterReason, reason.slice(0, 1_024));
    h.set(BusHeaders.DeadLetterConsumer, this.options.durable);
    h.set(BusHeaders.DeadLetterSubject, message.subject);
    h.set(BusHeaders.DeadLetterStreamSequence, String(message.seq));
    h.set(BusHeaders.DeadLetterDeliveries, String(message.info.deliveryCount));
    try {
      await this.js.publish(`${this.topo.deadLetterSubjectRoot}.${this.options.durable}`, message.data, {
        headers: h,
        msgID: `${this.options.durable}:${message.seq}`,
      });
    } catch (publishError) {
      // Never terminate what we could not park: it is redelivered and tried again.
      this.log('error', 'dead-letter publish failed; message will be redelivered', {
        durable: this.options.durable,
        error: publishError instanceof Error ? publishError.message : String(publishError),
      });
      message.nak(this.options.backoffMs[0]);
      return;
    }
    this.log('warn', 'message dead-lettered', { durable: this.options.durable, seq: message.seq, code, reason });
    // The reason travels in the dead letter's headers; a reason on +TERM itself is not
    // understood by servers before 2.10.4, which would leave the message pending.
    message.term();
  }

  private log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.options.log?.(level, message, fields);
  }
}
