import type { Pool } from 'pg';
import type { JetStreamClient } from '@nats-io/jetstream';
import { BusHeaders } from '@packetagent/bus';

/**
 * Positions at or below `upTo` that the store holds but the stream does not. Reads only
 * message headers through an ordered consumer, then compares with the store page by page.
 */
export async function findMissingPositions(
  js: JetStreamClient,
  pool: Pool,
  stream: string,
  upTo: number,
  messagesInStream: number,
): Promise<number[]> {
  const present = new Set<number>();
  // An empty stream (purged, recreated) yields nothing to an ordered consumer: skip the scan.
  if (messagesInStream > 0) {
    const consumer = await js.consumers.get(stream, { headers_only: true });
    try {
      const messages = await consumer.consume({ max_messages: 1_000 });
      for await (const message of messages) {
        const position = Number(message.headers?.get(BusHeaders.GlobalPosition) ?? 0);
        if (position > 0) present.add(position);
        if (message.info.pending === 0) break;
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
  }
  const missing: number[] = [];
  let after = 0;
  for (;;) {
    const { rows } = await pool.query<{ p: string }>(
      `SELECT global_position AS p FROM events WHERE global_position > $1 AND global_position <= $2
        ORDER BY global_position LIMIT 10000`,
      [after, upTo],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      const position = Number(row.p);
      if (!present.has(position)) missing.push(position);
    }
    after = Number(rows[rows.length - 1]!.p);
  }
  return missing;
}
