import type { ServerResponse } from 'node:http';
import { responseSink } from '../../live/response-sink';
import type { FeedSink } from './feed-session';

/**
 * SSE framing of the feed: `id: <cursor>`, `event: <type>`, `data: <envelope>`; `: heartbeat`
 * comments; a last `closing` event with the reason and the cursor to resume from.
 */
export function sseFeedSink(response: ServerResponse): FeedSink {
  const sink = responseSink(response);
  return {
    send: async (event) => {
      if (!sink.write(`id: ${event.globalPosition}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)) await sink.drained();
    },
    heartbeat: () => void sink.write(': heartbeat\n\n'),
    end: (reason, detail, cursor) => {
      if (reason !== 'client_gone') sink.write(`event: closing\ndata: ${JSON.stringify({ reason, detail, cursor: String(cursor) })}\n\n`);
      sink.end();
    },
  };
}
