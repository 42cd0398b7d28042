import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusHeaders } from '@packetagent/bus';

export interface StreamEntry {
  seq: number;
  position: number;
  eventId: string;
  repaired: boolean;
}

/** Everything currently in a stream, in stream order (test helper). */
export async function readStreamEntries(nc: NatsConnection, stream: string): Promise<StreamEntry[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  if (info.state.messages === 0) return [];
  const consumer = await jetstream(nc).consumers.get(stream, { headers_only: true });
  const entries: StreamEntry[] = [];
  try {
    const messages = await consumer.consume({ max_messages: 1_000 });
    for await (const message of messages) {
      entries.push({
        seq: message.seq,
        position: Number(message.headers?.get(BusHeaders.GlobalPosition)),
        eventId: message.headers?.get(BusHeaders.EventId) ?? '',
        repaired: message.headers?.get(BusHeaders.Repaired) === 'true',
      });
      if (message.seq >= info.state.last_seq || message.info.pending === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return entries;
}
