import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { actorPrincipalOf } from '../../http/request-context';
import type { ActorPrincipal } from '../actors/actor-principal';

/** Parameter decorator: the actor token that authenticated this `@ActorTokenOnly()` request. */
export const CallingActor = createParamDecorator((_: unknown, context: ExecutionContext): ActorPrincipal => {
  const actor = actorPrincipalOf(context.switchToHttp().getRequest<FastifyRequest>());
  if (!actor) throw new Error('@CallingActor() used on a route that is not @ActorTokenOnly()');
  return actor;
});
