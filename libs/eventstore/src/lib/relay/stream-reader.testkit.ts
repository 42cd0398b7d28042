import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { BusHeaders } from '@packetagent/bus';
import { scanStreamHeaders } from './stream-audit';

export interface StreamEntry {
  seq: number;
  position: number;
  eventId: string;
  repaired: boolean;
}

/** Everything currently in a stream, in stream order (test helper). */
export async function readStreamEntries(nc: NatsConnection, stream: string): Promise<StreamEntry[]> {
  const info = await (await jetstreamManager(nc)).streams.info(stream);
  const entries: StreamEntry[] = [];
  await scanStreamHeaders(jetstream(nc), stream, info.state.messages, (message) =>
    entries.push({
      seq: message.seq,
      position: Number(message.headers?.get(BusHeaders.GlobalPosition)),
      eventId: message.headers?.get(BusHeaders.EventId) ?? '',
      repaired: message.headers?.get(BusHeaders.Repaired) === 'true',
    }),
  );
  return entries;
}
