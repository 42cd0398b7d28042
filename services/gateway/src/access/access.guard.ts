import { Inject, Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { Identifiers, roleHasPermission, type Role } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { ApiKeyAuthenticator } from '../api-keys/api-key.authenticator';
import { ActorTokenAuthenticator } from '../packetade/actors/actor-token.authenticator';
import { looksLikeActorToken } from '../packetade/actors/actor-token';
import {
  AccessPolicyMissingError,
  CsrfTokenInvalidError,
  NotFoundError,
  PermissionDeniedError,
  TotpRequiredError,
  UnauthenticatedError,
} from '../identity/errors';
import { sameSecret } from '../identity/secrets';
import { setActorPrincipal, setPrincipal } from '../http/request-context';
import { CSRF_HEADER, sessionIdFrom } from '../sessions/session.cookie';
import { SessionStore } from '../sessions/session.store';
import { ACCESS_POLICY, type AccessPolicy } from './access.decorators';
import type { Principal } from './principal';

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const BEARER = /^Bearer +(\S+)$/i;

type Caller = { kind: 'user'; id: string } | { kind: 'api_key'; id: string; workspaceId: string; role: Role };

/**
 * Applied to every route of the app. Fails closed: a route without `@Public()`,
 * `@Authenticated()` or `@RequirePermission()` is refused. Authenticates by bearer API key or
 * session cookie (with the CSRF header on changes), then resolves the caller's role in `:ws`.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly logger = new Logger('access');
  private readonly reportedUnmarked = new Set<string>();

  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: SessionStore,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly actorTokens: ActorTokenAuthenticator,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy = this.reflector.getAllAndOverride<AccessPolicy | undefined>(ACCESS_POLICY, [context.getHandler(), context.getClass()]);
    if (!policy) {
      this.reportUnmarked(context);
      throw new AccessPolicyMissingError();
    }
    // Only HTTP comes through here; the gRPC door has a guard of its own (ActorTokenGrpcGuard).
    if (context.getType() !== 'http') return false;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (policy.kind === 'public') return true;
    if (policy.kind === 'actor') {
      setActorPrincipal(request, await this.actorTokens.fromAuthorization(request.headers.authorization));
      return true;
    }

    const caller = await this.authenticate(request, policy.kind === 'authenticated' && policy.allowPendingTotp);
    if (policy.kind === 'authenticated') {
      if (!policy.principals.includes(caller.kind)) {
        throw new PermissionDeniedError(caller.kind === 'api_key' ? 'this operation needs a signed-in user, not an API key' : 'this operation needs an API key');
      }
      setPrincipal(request, principalFor(caller, caller.kind === 'api_key' ? caller.workspaceId : null, caller.kind === 'api_key' ? caller.role : null));
      return true;
    }

    if (!request.routeOptions.url?.includes(':ws')) {
      this.logger.error(`${request.method} ${request.routeOptions.url ?? '(no route)'} uses @RequirePermission without a :ws path parameter`);
      throw new AccessPolicyMissingError();
    }
    const workspaceId = (request.params as Record<string, unknown> | undefined)?.['ws'];
    const role = typeof workspaceId === 'string' && Identifiers.workspace.test(workspaceId) ? await this.roleIn(caller, workspaceId) : null;
    // No access and no such workspace answer alike, so a workspace's existence does not leak.
    if (role === null) throw new NotFoundError('no such workspace');
    if (!roleHasPermission(role, policy.permission)) throw new PermissionDeniedError(`this needs the "${policy.permission}" permission in the workspace`);
    setPrincipal(request, principalFor(caller, workspaceId as string, role));
    return true;
  }

  private async authenticate(request: FastifyRequest, allowPendingTotp: boolean): Promise<Caller> {
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      const token = BEARER.exec(authorization)?.[1];
      if (!token) throw new UnauthenticatedError('the Authorization header must be "Bearer <API key>"');
      if (looksLikeActorToken(token)) throw new UnauthenticatedError('a PacketADE actor token is accepted only by /api/v1/packetade operations');
      const key = await this.apiKeys.authenticate(token);
      return { kind: 'api_key', id: key.id, workspaceId: key.workspaceId, role: key.role };
    }
    const sessionId = sessionIdFrom(request);
    if (!sessionId) throw new UnauthenticatedError('sign in, or present an API key as "Authorization: Bearer <API key>"');
    const session = await this.sessions.get(sessionId);
    if (!session) throw new UnauthenticatedError('the session has ended; sign in again');
    if (session.pendingTotp && !allowPendingTotp) throw new TotpRequiredError();
    // A cookie rides along on any cross-site request; the header proves the page read the login answer.
    if (MUTATIONS.has(request.method)) {
      const presented = request.headers[CSRF_HEADER];
      if (typeof presented !== 'string' || !sameSecret(presented, session.csrfToken)) throw new CsrfTokenInvalidError();
    }
    return { kind: 'user', id: session.userId };
  }

  private async roleIn(caller: Caller, workspaceId: string): Promise<Role | null> {
    if (caller.kind === 'api_key') return caller.workspaceId === workspaceId ? caller.role : null;
    const { rows } = await this.pool.query<{ role: Role }>(
      `SELECT role FROM identity.memberships WHERE user_id = $1 AND workspace_id = $2`,
      [caller.id, workspaceId],
    );
    return rows[0]?.role ?? null;
  }

  private reportUnmarked(context: ExecutionContext): void {
    const route = `${context.getClass().name}.${context.getHandler().name}`;
    if (this.reportedUnmarked.has(route)) return;
    this.reportedUnmarked.add(route);
    this.logger.error(`${route} has no @Public(), @Authenticated() or @RequirePermission(); every request to it is refused`);
  }
}

function principalFor(caller: Caller, workspaceId: string | null, role: Role | null): Principal {
  return { kind: caller.kind, id: caller.id, workspaceId, role, actor: { kind: caller.kind, id: caller.id } };
}
