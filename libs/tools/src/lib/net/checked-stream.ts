import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { ToolFailure } from '../errors';
import { abortable, deadline } from '../internal/deadline';
import { asCheckedFetchError, requestUrl, type CheckedFetchRequest } from './checked-fetch';
import { bareHost, checkedDestination, effectivePort, systemResolver } from './destination';
import { byteCap, checkConnectedAddress, connectionFailure, decoder, pinnedLookup, tooLarge } from './http-client';

export interface CheckedStreamResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** Decoded and capped at maxResponseBytes (the stream fails past it); destroyed when the signal aborts. */
  body: Readable;
  connectedAddress: string;
}

/**
 * checkedFetch's address rules with the body handed over as it arrives, for answers that are
 * streams (server-sent events). `timeoutMs` bounds the checks and the response head only; the
 * body lives until it ends, fails its cap, or `signal` aborts.
 */
export async function checkedStream(request: CheckedFetchRequest): Promise<CheckedStreamResponse> {
  const url = requestUrl(request.url);
  const signal = request.signal ?? new AbortController().signal;
  const head = deadline(signal, request.timeoutMs);
  try {
    const pinned = await abortable(checkedDestination(url, { resolveHost: request.resolveHost ?? systemResolver, allowPrivate: request.allowPrivate }), head.signal);
    const response = await new Promise<Omit<CheckedStreamResponse, 'connectedAddress'>>((resolve, reject) => {
      const host = bareHost(url);
      const headers: Record<string, string> = { ...request.headers };
      if (request.body) headers['content-length'] = String(request.body.length);
      const req = (url.protocol === 'https:' ? https : http).request({
        protocol: url.protocol,
        hostname: host,
        port: effectivePort(url),
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        agent: request.agent ?? false,
        lookup: pinnedLookup(pinned),
        ...(url.protocol === 'https:' && isIP(host) === 0 ? { servername: host } : {}),
      });
      let answered = false;
      const fail = (error: unknown) => {
        req.destroy();
        if (!answered) reject(error);
      };
      const onHeadAbort = () => fail(head.signal.reason);
      head.signal.addEventListener('abort', onHeadAbort, { once: true });
      checkConnectedAddress(req, pinned.address, fail);
      req.on('error', (error) => fail(connectionFailure(request.method, url.origin, error)));
      req.on('response', (response) => {
        head.signal.removeEventListener('abort', onHeadAbort);
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > request.maxResponseBytes) return fail(tooLarge(request.maxResponseBytes));
        let decode;
        try {
          decode = decoder(response.headers['content-encoding']);
        } catch (error) {
          return fail(error);
        }
        // A compressed body is capped on the wire and once decoded, as checkedFetch does.
        const wire = response.pipe(byteCap(request.maxResponseBytes));
        const body = decode ? wire.pipe(decode).pipe(byteCap(request.maxResponseBytes)) : wire;
        const stages: Readable[] = decode ? [response, wire, decode, body] : [response, wire];
        const destroyAll = (error?: Error) => {
          for (const stage of stages) if (stage !== body) stage.destroy();
          body.destroy(error);
        };
        for (const stage of stages) if (stage !== body) stage.on('error', (error: Error) => destroyAll(error));
        // The body may fail before its reader attaches: readers check `errored` when they take it.
        body.on('error', () => undefined);
        const onAbort = () => destroyAll(signal.reason instanceof Error ? signal.reason : new ToolFailure('aborted', 'the request was aborted'));
        signal.addEventListener('abort', onAbort, { once: true });
        body.once('close', () => signal.removeEventListener('abort', onAbort));
        answered = true;
        resolve({ status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers: response.headers, body });
      });
      req.end(request.body);
    });
    return { ...response, connectedAddress: pinned.address };
  } catch (error) {
    throw asCheckedFetchError(error, request.signal);
  } finally {
    head.dispose();
  }
}
