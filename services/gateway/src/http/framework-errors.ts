import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, problemTitle } from './problem';
import { REQUEST_ID_HEADER, requestIdOf } from './request-context';

/** Errors Fastify's router raises before any route, hook or error handler runs. */
const ROUTER_ERRORS: Readonly<Record<string, { status: number; code: string; detail: string }>> = {
  FST_ERR_BAD_URL: { status: 400, code: 'invalid_url', detail: 'the path is not valid percent-encoded UTF-8' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'path_parameter_too_long', detail: 'a path parameter is longer than the server accepts' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'bad_request', detail: 'no route accepts this request' },
};

function problemText(status: number, code: string, detail: string, requestId: string): string {
  return JSON.stringify({ type: `urn:packetagent:problem:${code}`, title: problemTitle(status), status, detail, code, requestId });
}

function routerErrorAnswer(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known = ROUTER_ERRORS[error.code] ?? { status: 400, code: 'bad_request', detail: 'the request line is not valid' };
  const requestId = requestIdOf(request);
  void reply
    .status(known.status)
    .header(REQUEST_ID_HEADER, requestId)
    .header('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`)
    .send(problemText(known.status, known.code, known.detail, requestId));
}

/**
 * A request Node's HTTP parser refuses (a malformed Content-Length, conflicting framing, a header
 * too large) never reaches Fastify: the answer is written on the socket, as problem+json, and the
 * connection closed since its framing can no longer be trusted.
 */
function clientErrorAnswer(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'the request did not arrive in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'the request headers are larger than the server accepts']
        : [400, 'malformed_request', 'the request is not valid HTTP/1.1 (framing, Content-Length or headers)'];
  const requestId = randomUUID();
  const body = problemText(status, code, detail, requestId);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${REQUEST_ID_HEADER}: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Fastify's router answers a bad URL or an over-long path parameter before any route, hook or
 * error handler runs; only its `frameworkErrors` option reaches those errors. Build every
 * FastifyAdapter with these options so they come out as problem+json like all other errors.
 */
export function withFrameworkErrorAnswers<T extends object>(options: T): T & { frameworkErrors: typeof routerErrorAnswer } {
  return { ...options, frameworkErrors: routerErrorAnswer };
}

/**
 * Makes the requests Node's HTTP parser refuses problem+json too. The router's errors are
 * answered through the adapter's options: see withFrameworkErrorAnswers.
 */
export function installFrameworkErrorAnswers(fastify: FastifyInstance): void {
  fastify.server.removeAllListeners('clientError');
  fastify.server.on('clientError', clientErrorAnswer);
}
