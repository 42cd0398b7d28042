export { GatewayModule } from './gateway.module';
export { configureGatewayApp } from './configure-app';
export { GATEWAY_OPTIONS, type GatewayOptions, type ResolvedGatewayOptions } from './gateway.options';
export { Public, Authenticated, RequirePermission, ACCESS_POLICY, type AccessPolicy } from './access/access.decorators';
export { Principal, type PrincipalKind, type WorkspacePrincipal } from './access/principal';
export { ROLES, PERMISSIONS, ROLE_PERMISSIONS, roleHasPermission, roleWithin, type Role, type Permission } from '@packetagent/contracts';
export {
  toProblem,
  problemStatusFor,
  problemTitle,
  PROBLEM_STATUS_BY_CODE,
  PROBLEM_CONTENT_TYPE,
  type Problem,
  type ProblemBody,
} from './http/problem';
export { ProblemFilter } from './http/problem.filter';
export { withFrameworkErrorAnswers } from './http/framework-errors';
export { requestIdOf, principalOf } from './http/request-context';
export { GatewayValidationPipe } from './http/validation';
export { OPENAPI_PATH } from './openapi/openapi.document';
export { SESSION_COOKIE, CSRF_HEADER } from './sessions/session.cookie';
export { setupTokenPath } from './setup/setup-token.issuer';
export {
  UnauthenticatedError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitedError,
  ServiceUnavailableError,
} from './identity/errors';
export { ControlPlaneModule, registerControlPlaneParsers } from './control-plane/control-plane.module';
export { WEBHOOK_SIGNATURE_HEADER } from './control-plane/hooks.controller';
export { GATEWAY_REDIS } from './identity/redis';
export { AttentionRoutesModule } from './attention/attention-routes.module';
export { BudgetsRoutesModule } from './budgets/budgets-routes.module';
export { CredentialsRoutesModule } from './credentials/credentials-routes.module';
export { AuditRoutesModule } from './audit/audit-routes.module';
export { LiveRoutesModule } from './live/live-routes.module';
export { DEFAULT_LIVE_OPTIONS, type LiveOptions } from './live/live.options';
export { OperationsRoutesModule } from './operations/operations-routes.module';
export { MigrationRoutesModule } from './migration/migration-routes.module';
export { SupervisionRoutesModule } from './supervision/supervision-routes.module';
export { ConsoleModule, type ConsoleOptions } from './console/console.module';
export { SandboxRoutesModule } from './sandbox/sandbox-routes.module';
export { ComputersRoutesModule } from './computers/computers-routes.module';
export { PacketAdeRoutesModule } from './packetade/packetade-routes.module';
export { packetAdeGrpcOptions, PACKETADE_PROTO_DIR, type PacketAdeGrpcSettings } from './packetade/grpc/grpc-server';
export { PacketAdeGrpcHealth } from './packetade/grpc/grpc-health';
export { NotificationsRoutesModule } from './notifications/notifications-routes.module';
