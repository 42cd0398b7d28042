import type { ServerResponse } from 'node:http';
import type { LiveSink } from './live-session';

/** An SSE response as a sink: writes until the client is gone, waits for drain, ends once. */
export function responseSink(response: ServerResponse): LiveSink {
  return {
    write: (chunk) => (response.writableEnded || response.destroyed ? true : response.write(chunk)),
    drained: () =>
      new Promise<void>((resolve) => {
        if (response.destroyed || !response.writableNeedDrain) return resolve();
        const done = () => {
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        response.on('drain', done);
        response.on('close', done);
      }),
    end: () => {
      if (!response.writableEnded) response.end();
    },
  };
}
