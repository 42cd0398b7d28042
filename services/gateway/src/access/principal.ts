import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Actor, Role } from '@packetagent/contracts';
import { principalOf } from '../http/request-context';

export type PrincipalKind = 'user' | 'api_key';

/**
 * Who is calling. On a `@RequirePermission` route `workspaceId` is the routed `:ws` and
 * `role` the caller's role there; on an `@Authenticated` route both are null for users (an API
 * key always carries its one workspace). `actor` is what goes into events.
 */
export interface Principal {
  kind: PrincipalKind;
  id: string;
  workspaceId: string | null;
  role: Role | null;
  actor: Actor & { kind: PrincipalKind };
}

/** The principal of a `@RequirePermission` route: the workspace and role are always known. */
export interface WorkspacePrincipal extends Principal {
  workspaceId: string;
  role: Role;
}

/** Parameter decorator: the authenticated caller of this request. */
export const Principal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = principalOf(context.switchToHttp().getRequest<FastifyRequest>());
  // Reaching here without one means @Principal() was used on a @Public() route: a programming error.
  if (!principal) throw new Error('@Principal() used on a route that does not authenticate');
  return principal;
});
