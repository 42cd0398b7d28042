import type { Pool } from 'pg';
import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { BusHeaders } from '@packetagent/bus';

/**
 * Visits every message of a stream in order, headers only, through an ordered consumer. An
 * empty stream (purged, recreated) would yield nothing and never end, so it is not read.
 */
export async function scanStreamHeaders(
  js: JetStreamClient,
  stream: string,
  messagesInStream: number,
  visit: (message: JsMsg) => void,
): Promise<void> {
  if (messagesInStream === 0) return;
  const consumer = await js.consumers.get(stream, { headers_only: true });
  try {
    const messages = await consumer.consume({ max_messages: 1_000 });
    for await (const message of messages) {
      visit(message);
      if (message.info.pending === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
}

/**
 * Positions at or below `upTo` that the store holds but the stream does not. Reads only
 * message headers, then compares with the store page by page.
 */
export async function findMissingPositions(
  js: JetStreamClient,
  pool: Pool,
  stream: string,
  upTo: number,
  messagesInStream: number,
): Promise<number[]> {
  const present = new Set<number>();
  await scanStreamHeaders(js, stream, messagesInStream, (message) => {
    const position = Number(message.headers?.get(BusHeaders.GlobalPosition) ?? 0);
    if (position > 0) present.add(position);
  });
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
