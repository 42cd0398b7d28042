import { Injectable } from '@nestjs/common';
import { CommandBus, CommandTimeoutError, NoHandlerError, RemoteCommandError } from '@packetagent/bus';
import {
  McpCommands,
  mcpToolDigest,
  ValidationError,
  validateStoredDefinition,
  type McpServer,
  type PinnedMcpTool,
  type ValidationIssue,
  type WorkerDefinition,
} from '@packetagent/contracts';

/** Beyond a server's own timeout: the sandbox connects and initialises before it lists. */
export const MCP_LIST_MARGIN_MS = 5_000;

/** A server's tools could not be listed, so the version cannot pin them: nothing was written. */
export class McpToolsNotPinnedError extends ValidationError {
  override readonly code = 'mcp_tools_not_pinned';
}

type Listing = { ok: true; tools: PinnedMcpTool[] } | { ok: false; message: string };

/**
 * Pins each declared MCP server's tools into the definition, as the sandbox service lists them
 * now: the version may call those tools only, with those schemas, whatever the server lists
 * later. Every server is asked at once; any that cannot be listed refuses the whole version.
 */
@Injectable()
export class PinMcpTools {
  constructor(private readonly bus: CommandBus) {}

  async pin(workspaceId: string, definition: WorkerDefinition): Promise<WorkerDefinition> {
    const servers = definition.mcp ?? [];
    if (servers.length === 0) return definition;
    const listings = await Promise.all(servers.map((server) => this.list(workspaceId, server)));
    const issues: ValidationIssue[] = listings.flatMap((listing, index) => (listing.ok ? [] : [{ path: `mcp[${index}]`, message: listing.message }]));
    if (issues.length > 0) {
      const names = servers.filter((_server, index) => !listings[index]!.ok).map((server) => `"${server.name}"`);
      throw new McpToolsNotPinnedError(`the tools of MCP server ${names.join(', ')} could not be listed, so the version cannot pin them`, issues);
    }
    const pinned = { ...definition, mcp: servers.map((server, index) => ({ ...server, tools: (listings[index] as { tools: PinnedMcpTool[] }).tools })) };
    // Grants are checked again against the pinned lists: a grant of a tool the server does not list is refused.
    return validateStoredDefinition(pinned);
  }

  private async list(workspaceId: string, server: McpServer): Promise<Listing> {
    const { tools: _unpinned, ...spec } = server;
    try {
      // Policy grants credentials to runs, not to version creation: a server is listed without its bearer.
      const listed = await this.bus.request(McpCommands.list, { workspaceId, server: spec }, { timeoutMs: server.timeoutMs + MCP_LIST_MARGIN_MS });
      return checkedListing(listed.tools);
    } catch (error) {
      return { ok: false, message: `${failureText(server, error)}${credentialNote(server)}` };
    }
  }
}

function checkedListing(tools: PinnedMcpTool[]): Listing {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) return { ok: false, message: `the server listed the tool "${tool.name}" twice` };
    seen.add(tool.name);
    const { digest, ...rest } = tool;
    if (mcpToolDigest(rest) !== digest) return { ok: false, message: `the listing of the tool "${tool.name}" does not match its digest` };
  }
  return { ok: true, tools };
}

function failureText(server: McpServer, error: unknown): string {
  const name = `MCP server "${server.name}"`;
  if (error instanceof NoHandlerError) return `${name} was not listed: the sandbox service, which lists MCP servers, did not answer`;
  if (error instanceof CommandTimeoutError) return `${name} did not list its tools within ${error.timeoutMs} ms`;
  if (error instanceof RemoteCommandError) return `${name} could not be listed (${error.code}): ${error.message}`;
  if (error instanceof ValidationError) return `${name} answered a tool list that cannot be read: ${error.issues.map((issue) => `${issue.path} ${issue.message}`).join('; ') || error.message}`;
  return `${name} could not be listed: ${error instanceof Error ? error.message : String(error)}`;
}

function credentialNote(server: McpServer): string {
  if (server.transport !== 'http' || server.credential === undefined) return '';
  return `; it was asked without its credential "${server.credential}", which cannot be used when a version is created yet`;
}
