import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../access/principal';
import type { ActorPrincipal } from '../packetade/actors/actor-principal';

/** Accepted incoming ids: short and free of anything that could forge a log line. */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

interface RequestContext {
  requestId: string;
  principal: Principal | null;
  actor: ActorPrincipal | null;
}

// Keyed by the Node request, which Fastify hooks, Nest guards and filters all share.
const contexts = new WeakMap<IncomingMessage, RequestContext>();

function contextOf(request: FastifyRequest): RequestContext {
  let context = contexts.get(request.raw);
  if (!context) {
    context = { requestId: randomUUID(), principal: null, actor: null };
    contexts.set(request.raw, context);
  }
  return context;
}

export function requestIdOf(request: FastifyRequest): string {
  return contextOf(request).requestId;
}

export function principalOf(request: FastifyRequest): Principal | null {
  return contextOf(request).principal;
}

export function setPrincipal(request: FastifyRequest, principal: Principal): void {
  contextOf(request).principal = principal;
}

export function actorPrincipalOf(request: FastifyRequest): ActorPrincipal | null {
  return contextOf(request).actor;
}

export function setActorPrincipal(request: FastifyRequest, actor: ActorPrincipal): void {
  contextOf(request).actor = actor;
}

/**
 * Request ids (a well-formed incoming `x-request-id`, else a new one, echoed on the response)
 * and one access-log line per request: method, route pattern, status, duration, request id and
 * principal. Headers, bodies and query strings are never logged.
 */
export function installRequestContext(fastify: FastifyInstance, logger: Pick<Logger, 'log'>): void {
  fastify.addHook('onRequest', async (request, reply) => {
    const incoming = request.headers[REQUEST_ID_HEADER];
    const requestId = typeof incoming === 'string' && WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    contexts.set(request.raw, { requestId, principal: null, actor: null });
    reply.header(REQUEST_ID_HEADER, requestId);
  });
  fastify.addHook('onResponse', async (request, reply) => {
    const { requestId, principal, actor } = contextOf(request);
    const route = request.routeOptions.url ?? '(no route)';
    const who = principal ? `${principal.kind}:${principal.id}` : actor ? `actor_token:${actor.tokenId}` : '-';
    logger.log(
      `${request.method} ${route} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)}ms request=${requestId} principal=${who}`,
    );
  });
}
