/**
 * A TCP proxy between one app process and Postgres that records the statements the app sends:
 * each simple query ('Q') and each execute ('E') of the frontend protocol, with the time it
 * arrived, its SQL text (from the 'Q' itself or the 'P' that parsed the statement) and its
 * bound text parameters. Bytes are forwarded unchanged in both directions; the backend's side
 * is not parsed.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { now } from './stats';

export interface PgStatement {
  /** Epoch milliseconds (with the fraction) when the message reached the proxy. */
  at: number;
  /** Which of the app's connections sent it, numbered in the order they were opened. */
  connection: number;
  /** 'Q' (simple query) or 'E' (execute of a bound statement). */
  message: 'Q' | 'E';
  sql: string;
  /** Bound parameters in text form (null for a NULL or binary one); none for a simple query. */
  params: (string | null)[];
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
/** Parameters are kept whole up to this size (event JSON is longer and only read for its types). */
const PARAM_LIMIT = 64 * 1024;

export interface PgProxy {
  /** The app's PACKETAGENT_DATABASE_URL: the given one, with the proxy as its host. */
  url: string;
  statements: PgStatement[];
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 and forwards every connection to the host and port of `databaseUrl`. */
export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const upstreamHost = target.hostname || '127.0.0.1';
  const upstreamPort = Number(target.port || 5432);
  const statements: PgStatement[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;

  const server: Server = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    const id = ++connections;
    const frontend = new FrontendParser(id, statements);
    let upstream: Socket | null = null;
    let pending: Buffer = Buffer.alloc(0);

    const open = (): Socket => {
      const socket = connect({ host: upstreamHost, port: upstreamPort });
      sockets.add(socket);
      socket.once('close', () => {
        sockets.delete(socket);
        client.destroy();
      });
      socket.on('error', () => client.destroy());
      socket.pipe(client);
      return socket;
    };

    client.on('error', () => upstream?.destroy());
    client.once('close', () => upstream?.destroy());
    client.on('data', (chunk: Buffer) => {
      if (upstream) {
        if (!upstream.write(chunk)) client.pause();
        frontend.push(chunk);
        return;
      }
      // Before the startup message: untyped packets of int32 length, int32 code.
      pending = Buffer.concat([pending, chunk]);
      while (!upstream && pending.length >= 8) {
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        const packet = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          // No TLS on the loopback: 'N' tells the client to go on in plain text (or give up, if it insists).
          client.write('N');
          continue;
        }
        upstream = open();
        upstream.on('drain', () => client.resume());
        upstream.write(packet);
        if (code === CANCEL_REQUEST) {
          // A cancel is its own connection with nothing after it.
          if (pending.length) upstream.write(pending);
        } else if (pending.length) {
          upstream.write(pending);
          frontend.push(pending);
        }
        pending = Buffer.alloc(0);
      }
    });
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    statements,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

/** Typed messages from the client (1 type byte, int32 length including itself), after the startup packet. */
class FrontendParser {
  private buffer: Buffer = Buffer.alloc(0);
  /** Prepared statement name -> SQL; '' is the unnamed statement. */
  private readonly prepared = new Map<string, string>();
  /** Portal name -> the statement it binds and its parameters. */
  private readonly portals = new Map<string, { sql: string; params: (string | null)[] }>();

  constructor(
    private readonly connection: number,
    private readonly into: PgStatement[],
  ) {}

  push(chunk: Buffer): void {
    const at = now();
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    let offset = 0;
    while (this.buffer.length - offset >= 5) {
      const length = this.buffer.readInt32BE(offset + 1);
      if (this.buffer.length - offset < 1 + length) break;
      this.message(this.buffer[offset]!, this.buffer.subarray(offset + 5, offset + 1 + length), at);
      offset += 1 + length;
    }
    this.buffer = offset === this.buffer.length ? Buffer.alloc(0) : Buffer.from(this.buffer.subarray(offset));
  }

  private message(type: number, body: Buffer, at: number): void {
    switch (String.fromCharCode(type)) {
      case 'Q':
        this.into.push({ at, connection: this.connection, message: 'Q', sql: cstring(body, 0).value, params: [] });
        return;
      case 'P': {
        const name = cstring(body, 0);
        this.prepared.set(name.value, cstring(body, name.next).value);
        return;
      }
      case 'B': {
        const portal = cstring(body, 0);
        const statement = cstring(body, portal.next);
        this.portals.set(portal.value, { sql: this.prepared.get(statement.value) ?? `<unknown statement ${statement.value}>`, params: bindParams(body, statement.next) });
        return;
      }
      case 'E': {
        const bound = this.portals.get(cstring(body, 0).value);
        this.into.push({ at, connection: this.connection, message: 'E', sql: bound?.sql ?? '<unknown portal>', params: bound?.params ?? [] });
        return;
      }
      case 'C':
        // Close of a statement ('S') or portal ('P').
        if (body[0] === 0x53) this.prepared.delete(cstring(body, 1).value);
        return;
      default:
        return;
    }
  }
}

function cstring(body: Buffer, from: number): { value: string; next: number } {
  const end = body.indexOf(0, from);
  const stop = end < 0 ? body.length : end;
  return { value: body.toString('utf8', from, stop), next: stop + 1 };
}

/** Bind: int16 n format codes, the codes, int16 n params, each int32 length (-1 NULL) and bytes. */
function bindParams(body: Buffer, from: number): (string | null)[] {
  let offset = from;
  const formats = body.readInt16BE(offset);
  offset += 2;
  const codes: number[] = [];
  for (let i = 0; i < formats; i++, offset += 2) codes.push(body.readInt16BE(offset));
  const count = body.readInt16BE(offset);
  offset += 2;
  const params: (string | null)[] = [];
  for (let i = 0; i < count; i++) {
    const length = body.readInt32BE(offset);
    offset += 4;
    if (length < 0) {
      params.push(null);
      continue;
    }
    // One format code applies to all parameters; none means text.
    const binary = (formats === 1 ? codes[0] : codes[i]) === 1;
    params.push(binary ? null : body.toString('utf8', offset, offset + Math.min(length, PARAM_LIMIT)));
    offset += length;
  }
  return params;
}
