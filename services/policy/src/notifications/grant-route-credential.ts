import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { v7 as uuidv7 } from 'uuid';
import {
  DomainError,
  notificationGrantTool,
  parsePayload,
  policyNotifyStream,
  signCredentialGrant,
  validateStoredDefinition,
  type NotificationRoute,
  type PolicyCommands,
  type PolicyEventData,
} from '@packetagent/contracts';
import { PG_POOL, PayloadNotFoundError, PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { SYSTEM_ACTOR } from '../attention/usecases/answer-attention';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';
import { UnknownRunError } from '../shared/errors';

export type GrantRouteCredentialRequest = z.output<(typeof PolicyCommands)['routeCredentialGrant']['request']>;

const CACHE_LIMIT = 512;

export class RouteCredentialUnavailableError extends DomainError {
  readonly code = 'route_credential_unavailable';
}

/**
 * A single-use grant for the credential of one notification route of a run's pinned effective
 * definition, read from the content-addressed copy under the run's pin: the notifications
 * service names a route, never a credential. Each grant is recorded before its token is handed out.
 */
@Injectable()
export class GrantRouteCredential {
  /** Routes by effective digest: a definition never changes under its digest. */
  private readonly routes = new Map<string, NotificationRoute[]>();

  constructor(
    private readonly store: PostgresEventStore,
    private readonly payloads: PayloadStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  async execute(request: GrantRouteCredentialRequest): Promise<{ credential: string; token: string }> {
    const { rows } = await this.pool.query<{ effective_digest: string }>('SELECT effective_digest FROM policy.runs WHERE run_id = $1 AND workspace_id = $2', [
      request.runId,
      request.workspaceId,
    ]);
    if (!rows[0]) throw new UnknownRunError(request.runId);
    const route = (await this.routesOf(request.workspaceId, rows[0].effective_digest))[request.routeIndex];
    if (!route?.credential) throw new RouteCredentialUnavailableError(`the run's definition has no notification route ${request.routeIndex} with a credential`);

    const grantId = uuidv7();
    const data: PolicyEventData<'policy.route_credential_granted'> = {
      runId: request.runId,
      routeIndex: request.routeIndex,
      channel: route.channel,
      credential: route.credential,
      deliveryId: request.deliveryId,
      grantId,
    };
    await this.store.append(policyNotifyStream(request.runId), 'any', [{ type: 'policy.route_credential_granted', data, actor: SYSTEM_ACTOR }], {
      workspaceId: request.workspaceId,
    });
    const expiresAt = new Date(this.options.clock().getTime() + 1_000 * this.options.credentialGrantTtlSeconds).toISOString();
    const token = signCredentialGrant(
      { grantId, workspaceId: request.workspaceId, runId: request.runId, tool: notificationGrantTool(route.channel), credential: route.credential, expiresAt },
      this.options.signingKey,
    );
    return { credential: route.credential, token };
  }

  private async routesOf(workspaceId: string, effectiveDigest: string): Promise<NotificationRoute[]> {
    const key = `${workspaceId}:${effectiveDigest}`;
    const cached = this.routes.get(key);
    if (cached) return cached;
    let routes: NotificationRoute[];
    try {
      routes = validateStoredDefinition(parsePayload(await this.payloads.get(workspaceId, effectiveDigest))).notifications;
    } catch (error) {
      if (error instanceof PayloadNotFoundError) throw new RouteCredentialUnavailableError(`the run's effective definition ${effectiveDigest} is not stored`);
      throw error;
    }
    if (this.routes.size >= CACHE_LIMIT) this.routes.delete(this.routes.keys().next().value!);
    this.routes.set(key, routes);
    return routes;
  }
}
