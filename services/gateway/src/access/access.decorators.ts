import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import type { Permission } from '@packetagent/contracts';
import type { PrincipalKind } from './principal';

export const ACCESS_POLICY = 'packetagent:access-policy';

export type AccessPolicy =
  | { kind: 'public' }
  | { kind: 'authenticated'; principals: readonly PrincipalKind[]; allowPendingTotp: boolean }
  | { kind: 'permission'; permission: Permission }
  | { kind: 'actor' };

export const SECURITY_SCHEMES = { bearer: 'bearer', cookie: 'cookie', csrf: 'csrf', actorToken: 'actorToken' } as const;

const documentedSecurity = (principals: readonly PrincipalKind[] = ['user', 'api_key']) =>
  applyDecorators(
    ...(principals.includes('api_key') ? [ApiSecurity(SECURITY_SCHEMES.bearer)] : []),
    ...(principals.includes('user') ? [ApiSecurity({ [SECURITY_SCHEMES.cookie]: [], [SECURITY_SCHEMES.csrf]: [] })] : []),
  );

/** Anyone may call this route; nothing is authenticated. */
export const Public = () => SetMetadata(ACCESS_POLICY, { kind: 'public' } satisfies AccessPolicy);

/**
 * A signed-in caller, outside any workspace. `principals` narrows who may call (e.g. only
 * users; API keys are accepted by default). `allowPendingTotp` is for the routes that complete
 * or abandon a login still waiting for its second factor, and nothing else.
 */
export const Authenticated = (options: { principals?: readonly PrincipalKind[]; allowPendingTotp?: boolean } = {}) => {
  const principals = options.principals ?? ['user', 'api_key'];
  return applyDecorators(
    SetMetadata(ACCESS_POLICY, { kind: 'authenticated', principals, allowPendingTotp: options.allowPendingTotp ?? false } satisfies AccessPolicy),
    documentedSecurity(principals),
  );
};

/**
 * A route under `/api/v1/workspaces/:ws/...` that needs `permission` in `:ws`. A caller without
 * access to the workspace gets 404 (its existence does not leak), one with access but not the
 * permission gets 403.
 */
export const RequirePermission = (permission: Permission) =>
  applyDecorators(
    SetMetadata(ACCESS_POLICY, { kind: 'permission', permission } satisfies AccessPolicy),
    ApiExtension('x-required-permission', permission),
    documentedSecurity(),
  );


/**
 * A PacketADE door operation: only an actor token (`Authorization: Bearer pade_...`, or gRPC
 * `authorization` metadata) is accepted, and its workspace is the token's. Whether the token
 * allows the operation is checked, and recorded, by the operation itself (ActorCalls).
 */
export const ActorTokenOnly = () =>
  applyDecorators(SetMetadata(ACCESS_POLICY, { kind: 'actor' } satisfies AccessPolicy), ApiSecurity(SECURITY_SCHEMES.actorToken));
