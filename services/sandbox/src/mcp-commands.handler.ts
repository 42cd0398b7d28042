import { Inject, Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { McpCommands, type McpCallResult, type McpListResult, type ParsedMcpServerSpec } from '@packetagent/contracts';
import type { McpCallRequest, McpSessions } from './mcp';
import { McpRouting } from './mcp/mcp-routing';
import { MCP_SESSIONS } from './sandbox.tokens';

/** `sandbox.mcp.*` over NATS request/reply: a run's calls and close go to the replica holding its sessions. */
@Injectable()
export class McpCommandsHandler {
  constructor(
    @Inject(MCP_SESSIONS) private readonly sessions: McpSessions,
    private readonly routing: McpRouting,
  ) {}

  @OnCommand(McpCommands.list)
  list(request: { workspaceId: string; server: ParsedMcpServerSpec; bearer?: string }): Promise<McpListResult> {
    return this.sessions.list(request);
  }

  @OnCommand(McpCommands.call)
  call(request: McpCallRequest): Promise<McpCallResult> {
    return this.routing.call(request);
  }

  @OnCommand(McpCommands.close)
  close(request: { workspaceId: string; runId: string }): Promise<{ closed: number }> {
    return this.routing.close({ workspaceId: request.workspaceId, runId: request.runId });
  }
}
