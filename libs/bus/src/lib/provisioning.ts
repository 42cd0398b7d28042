import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerInfo,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Topology } from './topology';

export function isNotFound(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamNotFound || error.code === JetStreamApiCodes.ConsumerNotFound)
  );
}

const STREAM_NAME_IN_USE = 10058;

type StreamSpec = Partial<StreamConfig> & Pick<StreamConfig, 'name' | 'subjects'>;

/**
 * Creates the stream, or updates it when its declared settings differ (unless `createOnly`,
 * for callers that need it to exist but do not own its settings). Safe from every replica.
 */
export async function ensureStream(jsm: JetStreamManager, spec: StreamSpec, createOnly = false): Promise<StreamInfo> {
  let current: StreamInfo;
  try {
    current = await jsm.streams.info(spec.name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      return await jsm.streams.add(spec);
    } catch (addError) {
      // Another replica created it between our info and add; any other refusal is real.
      if (addError instanceof JetStreamApiError && addError.code === STREAM_NAME_IN_USE) return jsm.streams.info(spec.name);
      throw addError;
    }
  }
  if (createOnly) return current;
  const drifted = (Object.keys(spec) as (keyof StreamSpec)[]).some(
    (key) => JSON.stringify(current.config[key]) !== JSON.stringify(spec[key]),
  );
  return drifted ? jsm.streams.update(spec.name, { ...current.config, ...spec }) : current;
}

export interface EventsStreamOptions {
  /** 1 on a single server, 3 in a cluster. */
  replicas?: number;
  /** How long JetStream remembers a Nats-Msg-Id for de-duplication, in milliseconds. */
  duplicateWindowMs?: number;
  /** 0 keeps events until removed by limits; the Postgres store remains the source of truth. */
  maxAgeMs?: number;
  /** Create it if missing but leave an existing stream's settings to its owner (the relay). */
  createOnly?: boolean;
}

export function ensureEventsStream(jsm: JetStreamManager, topo: Topology, options: EventsStreamOptions = {}) {
  return ensureStream(jsm, {
    name: topo.eventsStream,
    subjects: [`${topo.eventsSubjectRoot}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: options.replicas ?? 1,
    duplicate_window: nanos(options.duplicateWindowMs ?? 120_000),
    max_age: nanos(options.maxAgeMs ?? 0),
    allow_direct: true,
  }, options.createOnly);
}

export function ensureDeadLetterStream(jsm: JetStreamManager, topo: Topology, options: { replicas?: number } = {}) {
  return ensureStream(jsm, {
    name: topo.deadLetterStream,
    subjects: [`${topo.deadLetterSubjectRoot}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: options.replicas ?? 1,
    allow_direct: true,
  });
}

/**
 * Where producers publish messages for queue-triggered workers (`<root>.<workspace>.<subject>`).
 * Kept a week so a consumer that was down catches up; the two-minute window dedupes a
 * producer's retries by `Nats-Msg-Id`.
 */
export function ensureQueueStream(jsm: JetStreamManager, topo: Topology, options: { replicas?: number; maxAgeMs?: number } = {}) {
  return ensureStream(jsm, {
    name: topo.queueStream,
    subjects: [`${topo.queueSubjectRoot}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: options.replicas ?? 1,
    duplicate_window: nanos(120_000),
    max_age: nanos(options.maxAgeMs ?? 7 * 24 * 3_600_000),
  });
}

export interface DurableConsumerSpec {
  stream: string;
  durable: string;
  filterSubject: string;
  /** Milliseconds a delivery may stay unacknowledged before it is redelivered. */
  ackWaitMs?: number;
  maxAckPending?: number;
  deliverPolicy?: DeliverPolicy;
}

/** Creates or updates a durable pull consumer with explicit acks. */
export async function ensureDurableConsumer(jsm: JetStreamManager, spec: DurableConsumerSpec): Promise<ConsumerInfo> {
  const config: Partial<ConsumerConfig> = {
    durable_name: spec.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: spec.deliverPolicy ?? DeliverPolicy.All,
    filter_subject: spec.filterSubject,
    // Unlimited at the server: the consumer runner counts deliveries and dead-letters at its
    // own limit, so a message whose dead-lettering failed is still redelivered, never dropped.
    max_deliver: -1,
    ack_wait: nanos(spec.ackWaitMs ?? 30_000),
    max_ack_pending: spec.maxAckPending ?? 1,
  };
  try {
    const current = await jsm.consumers.info(spec.stream, spec.durable);
    const drifted = (['filter_subject', 'max_deliver', 'ack_wait', 'max_ack_pending'] as const).some(
      (key) => current.config[key] !== config[key],
    );
    return drifted ? jsm.consumers.update(spec.stream, spec.durable, config) : current;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return jsm.consumers.add(spec.stream, config);
  }
}
