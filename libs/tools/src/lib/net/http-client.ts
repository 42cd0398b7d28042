import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { isIP } from 'node:net';
import { Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ToolFailure } from '../errors';
import type { ResolvedAddress } from '../tool.types';
import { sameAddress } from './address-policy';
import { bareHost, effectivePort } from './destination';

export interface HttpExchange {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /**
   * The checked address to connect to; the host name still goes into the Host header and SNI.
   * null lets the system resolve the host: only for destinations the operator configured.
   */
  pinned: ResolvedAddress | null;
  maxResponseBytes: number;
  /** Aborts the exchange (the call's own signal combined with its deadline). */
  signal: AbortSignal;
  /** https only: PEM certificates trusted instead of the system's (an operator's private CA). */
  ca?: string;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** Decoded (content-encoding removed), never longer than maxResponseBytes. */
  body: Buffer;
}

/** Answers every lookup with the one address that was checked. */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

export function tooLarge(limit: number): ToolFailure {
  return new ToolFailure('response_too_large', `the response is larger than ${limit} bytes; the connection was closed`);
}

/** Counts bytes through a stream and fails it past `limit`. */
export function byteCap(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(tooLarge(limit));
      else callback(null, chunk);
    },
  });
}

export function decoder(encoding: string | undefined): Transform | null {
  switch ((encoding ?? 'identity').trim().toLowerCase()) {
    case 'identity':
    case '':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new ToolFailure('unsupported_encoding', `the response uses the content-encoding "${encoding}"`);
  }
}

/** Reads a response through its decoder, capping both the wire bytes and the decoded bytes. */
async function readBody(response: IncomingMessage, limit: number): Promise<Buffer> {
  const decode = decoder(response.headers['content-encoding']);
  const stages: Readable[] = [response.pipe(byteCap(limit))];
  // A compressed body is capped twice: on the wire, and once decoded (a small bomb inflates).
  if (decode) stages.push(stages[0]!.pipe(decode), decode.pipe(byteCap(limit)));
  const last = stages[stages.length - 1]!;
  const chunks: Buffer[] = [];
  return new Promise<Buffer>((resolve, reject) => {
    const fail = (error: Error) => {
      for (const stage of stages) stage.destroy();
      response.destroy();
      reject(error);
    };
    for (const stage of stages) stage.on('error', fail);
    response.on('error', fail);
    last.on('data', (chunk: Buffer) => chunks.push(chunk));
    last.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * One HTTP exchange with no redirect following, no proxy from the environment, no pooled
 * connection, a response cap enforced while reading, and (when pinned) a connection to the
 * checked address only, verified again once the socket is connected.
 */
export function exchange(request: HttpExchange): Promise<HttpResponse> {
  const { url, pinned, signal, maxResponseBytes } = request;
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const host = bareHost(url);
    const headers: Record<string, string> = { ...request.headers };
    if (request.body) headers['content-length'] = String(request.body.length);
    const req = client.request({
      protocol: url.protocol,
      hostname: host,
      port: effectivePort(url),
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers,
      agent: false,
      ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
      ...(url.protocol === 'https:' && isIP(host) === 0 ? { servername: host } : {}),
      ...(url.protocol === 'https:' && request.ca ? { ca: request.ca } : {}),
    });
    let settled = false;
    const finish = (error: unknown, response?: HttpResponse) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        req.destroy();
        reject(error);
      } else {
        resolve(response!);
      }
    };
    const onAbort = () => finish(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });

    if (pinned) checkConnectedAddress(req, pinned.address, finish);
    req.on('error', (error) => finish(connectionFailure(request.method, url.origin, error)));
    req.on('response', (response) => {
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxResponseBytes) {
        response.destroy();
        finish(tooLarge(maxResponseBytes));
        return;
      }
      const status = response.statusCode ?? 0;
      const base = { status, statusText: response.statusMessage ?? '', headers: response.headers };
      if (request.method === 'HEAD' || (status >= 300 && status < 400)) {
        // A redirect's body is never read: the connection is closed with the answer in hand.
        response.destroy();
        finish(undefined, { ...base, body: Buffer.alloc(0) });
        return;
      }
      let read: Promise<Buffer>;
      try {
        read = readBody(response, maxResponseBytes);
      } catch (error) {
        finish(error);
        return;
      }
      read.then(
        (body) => finish(undefined, { ...base, body }),
        (error: unknown) => finish(error instanceof ToolFailure ? error : new ToolFailure('connection_failed', `reading the response of ${url.origin} failed`, null, { cause: error })),
      );
    });
    req.end(request.body);
  });
}

/** Fails the request unless its socket connected to the address the checks pinned (never a rebound one). */
export function checkConnectedAddress(req: http.ClientRequest, address: string, fail: (error: ToolFailure) => void): void {
  req.on('socket', (socket: Socket) => {
    const verify = () => {
      if (!socket.remoteAddress || !sameAddress(socket.remoteAddress, address)) {
        fail(new ToolFailure('destination_not_allowed', `the connection reached ${socket.remoteAddress ?? 'an unknown address'}, not the checked ${address}`));
      }
    };
    if (socket.remoteAddress) verify();
    else socket.once('connect', verify);
  });
}

/** A request's transport error as the tools report it. */
export function connectionFailure(method: string, origin: string, error: Error): ToolFailure {
  return error instanceof ToolFailure ? error : new ToolFailure('connection_failed', `${method} ${origin} failed: ${error.message}`, null, { cause: error });
}
