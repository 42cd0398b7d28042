import { Inject, Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { McpCommands, type McpCallResult, type McpListResult, type ParsedMcpServerSpec } from '@packetagent/contracts';
import type { McpCallRequest, McpSessions } from './mcp';
import { MCP_SESSIONS } from './sandbox.tokens';

/** `sandbox.mcp.*` over NATS request/reply: a run's sessions live on the replica that served its first call. */
@Injectable()
export class McpCommandsHandler {
  constructor(@Inject(MCP_SESSIONS) private readonly sessions: McpSessions) {}

  @OnCommand(McpCommands.list)
  list(request: { workspaceId: string; server: ParsedMcpServerSpec; bearer?: string }): Promise<McpListResult> {
    return this.sessions.list(request);
  }

  @OnCommand(McpCommands.call)
  call(request: McpCallRequest): Promise<McpCallResult> {
    return this.sessions.call(request);
  }

  @OnCommand(McpCommands.close)
  async close(request: { workspaceId: string; runId: string }): Promise<{ closed: number }> {
    return { closed: await this.sessions.close(request.workspaceId, request.runId) };
  }
}
