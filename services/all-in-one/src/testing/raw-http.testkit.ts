import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/**
 * Sends bytes exactly as given (a request fetch refuses to send: a wrong Content-Length, broken
 * framing) and reads the first response off the socket.
 */
export function sendRaw(port: number, request: string | Buffer, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (outcome: RawAnswer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new Error(`no complete response within ${timeoutMs} ms`)), timeoutMs);
    const tryParse = (final: boolean) => {
      const data = Buffer.concat(chunks);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        if (final) finish(new Error(`the connection closed without a response (${data.length} bytes)`));
        return;
      }
      const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const length = headers['content-length'] === undefined ? null : Number(headers['content-length']);
      const body = data.subarray(end + 4);
      if (length !== null && body.length < length && !final) return;
      finish({ status: Number(statusLine!.split(' ')[1]), headers, text: body.subarray(0, length ?? body.length).toString('utf8') });
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      tryParse(false);
    });
    socket.on('end', () => tryParse(true));
    socket.on('close', () => tryParse(true));
    socket.on('error', (error) => (chunks.length ? tryParse(true) : finish(error)));
    socket.write(request);
  });
}
