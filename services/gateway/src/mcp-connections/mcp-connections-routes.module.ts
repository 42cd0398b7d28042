import { Module, type DynamicModule } from '@nestjs/common';
import { McpConnectionsController } from './mcp-connections.controller';
import { DEFAULT_MCP_CONNECTIONS_ROUTES_OPTIONS, MCP_CONNECTIONS_ROUTES_OPTIONS, type McpConnectionsRoutesOptions } from './mcp-connections-routes.options';
import { McpOAuthCallbackController } from './mcp-oauth-callback.controller';

/**
 * OAuth connections to MCP servers: `/api/v1/workspaces/:ws/mcp/connections` to begin one and
 * list them, and the public `/api/v1/mcp/oauth/callback` the authorization server sends the
 * operator back to. Forwards to the vault over NATS; needs BusModule.
 */
@Module({})
export class McpConnectionsRoutesModule {
  static forRoot(options: Partial<McpConnectionsRoutesOptions> = {}): DynamicModule {
    return {
      module: McpConnectionsRoutesModule,
      controllers: [McpConnectionsController, McpOAuthCallbackController],
      providers: [{ provide: MCP_CONNECTIONS_ROUTES_OPTIONS, useValue: { ...DEFAULT_MCP_CONNECTIONS_ROUTES_OPTIONS, ...options } }],
    };
  }
}
