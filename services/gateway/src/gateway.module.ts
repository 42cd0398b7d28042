import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, APP_PIPE, DiscoveryModule } from '@nestjs/core';
import { ZodSerializerInterceptor } from 'nestjs-zod';
import { AccessGuard } from './access/access.guard';
import { RouteAccessAudit } from './access/route-audit';
import { ApiKeyAuthenticator } from './api-keys/api-key.authenticator';
import { ApiKeysController } from './api-keys/api-keys.controller';
import { ActorTokenAuthenticator } from './packetade/actors/actor-token.authenticator';
import { CreateApiKey } from './api-keys/usecases/create-api-key/create-api-key.usecase';
import { ListApiKeys } from './api-keys/usecases/list-api-keys/list-api-keys.usecase';
import { RevokeApiKey } from './api-keys/usecases/revoke-api-key/revoke-api-key.usecase';
import { GATEWAY_OPTIONS, resolveGatewayOptions, type GatewayOptions, type ResolvedGatewayOptions } from './gateway.options';
import { GatewayValidationPipe } from './http/validation';
import { connectRedis, GATEWAY_REDIS, RedisCloser } from './identity/redis';
import { McpConnectionsRoutesModule } from './mcp-connections/mcp-connections-routes.module';
import { OpenApiController } from './openapi/openapi.controller';
import { OpenApiDocumentHolder } from './openapi/openapi.document';
import { PASSKEY_CONTROLLERS, PASSKEY_PROVIDERS } from './passkeys/passkeys.providers';
import { AuthController } from './sessions/auth.controller';
import { LoginThrottle } from './sessions/login-throttle';
import { SecondFactor } from './sessions/second-factor';
import { SessionCookies } from './sessions/session.cookies';
import { SessionStore } from './sessions/session.store';
import { CompleteTotpLogin } from './sessions/usecases/complete-totp-login/complete-totp-login.usecase';
import { DescribeCaller } from './sessions/usecases/describe-caller/describe-caller.usecase';
import { EnableTotp } from './sessions/usecases/enable-totp/enable-totp.usecase';
import { EnrolTotp } from './sessions/usecases/enrol-totp/enrol-totp.usecase';
import { Login } from './sessions/usecases/login/login.usecase';
import { Logout } from './sessions/usecases/logout/logout.usecase';
import { SetupTokenIssuer } from './setup/setup-token.issuer';
import { SetupController } from './setup/setup.controller';
import { CompleteSetup } from './setup/usecases/complete-setup/complete-setup.usecase';
import { CreateWorkspace } from './workspaces/usecases/create-workspace/create-workspace.usecase';
import { ListWorkspaces } from './workspaces/usecases/list-workspaces/list-workspaces.usecase';
import { WorkspacesController } from './workspaces/workspaces.controller';

/**
 * The HTTP front door: accounts, sessions, API keys, first-run setup, MCP servers' OAuth
 * connections (their callback is under the public URL), and the access guard, validation and
 * serialisation every route of the app goes through. Needs PG_POOL and PostgresEventStore
 * (EventStoreModule) and BusModule provided globally by the app.
 */
@Module({})
export class GatewayModule {
  static forRoot(options: GatewayOptions): DynamicModule {
    const resolved: ResolvedGatewayOptions = resolveGatewayOptions(options);
    return {
      module: GatewayModule,
      imports: [DiscoveryModule, McpConnectionsRoutesModule.forRoot({ publicUrl: resolved.publicUrl })],
      controllers: [SetupController, AuthController, WorkspacesController, ApiKeysController, OpenApiController, ...PASSKEY_CONTROLLERS],
      providers: [
        { provide: GATEWAY_OPTIONS, useValue: resolved },
        { provide: GATEWAY_REDIS, useFactory: () => connectRedis(resolved.redisUrl) },
        RedisCloser,
        { provide: APP_GUARD, useClass: AccessGuard },
        { provide: APP_PIPE, useClass: GatewayValidationPipe },
        { provide: APP_INTERCEPTOR, useClass: ZodSerializerInterceptor },
        RouteAccessAudit,
        OpenApiDocumentHolder,
        SessionStore,
        SessionCookies,
        LoginThrottle,
        SecondFactor,
        ApiKeyAuthenticator,
        ActorTokenAuthenticator,
        SetupTokenIssuer,
        CompleteSetup,
        Login,
        CompleteTotpLogin,
        Logout,
        DescribeCaller,
        EnrolTotp,
        EnableTotp,
        CreateWorkspace,
        ListWorkspaces,
        CreateApiKey,
        ListApiKeys,
        RevokeApiKey,
        ...PASSKEY_PROVIDERS,
      ],
      exports: [GATEWAY_OPTIONS, GATEWAY_REDIS],
    };
  }
}
