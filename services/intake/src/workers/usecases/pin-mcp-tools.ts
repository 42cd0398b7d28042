import { Injectable } from '@nestjs/common';
import { CommandBus, CommandTimeoutError, NoHandlerError, RemoteCommandError } from '@packetagent/bus';
import {
  McpCommands,
  mcpToolDigest,
  OAuthCommands,
  OAuthErrorCodes,
  openSealedCredential,
  recipientKeyPair,
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
    let bearer: string | undefined;
    try {
      bearer = await this.listingToken(workspaceId, server);
    } catch (error) {
      return { ok: false, message: connectionText(server, error) };
    }
    try {
      // Policy grants credentials to runs, not to version creation: a server with a static bearer is listed without it.
      const listed = await this.bus.request(McpCommands.list, { workspaceId, server: spec, ...(bearer ? { bearer } : {}) }, { timeoutMs: server.timeoutMs + MCP_LIST_MARGIN_MS });
      return checkedListing(listed.tools);
    } catch (error) {
      return { ok: false, message: `${failureText(server, error)}${credentialNote(server)}` };
    }
  }

  /**
   * An OAuth server's access token, for listing: the vault hands it out only for the server the
   * connection was made for, so the definition's author cannot send it anywhere else.
   */
  private async listingToken(workspaceId: string, server: McpServer): Promise<string | undefined> {
    if (server.transport !== 'http' || !server.oauth) return undefined;
    const keys = recipientKeyPair();
    const answer = await this.bus.request(OAuthCommands.token, { workspaceId, credential: server.oauth.credential, audience: server.url, recipientPublicKey: keys.publicKey });
    return openSealedCredential(answer.sealed, keys.privateKey);
  }
}

function connectionText(server: McpServer, error: unknown): string {
  const name = `MCP server "${server.name}"`;
  const credential = server.transport === 'http' ? server.oauth?.credential : undefined;
  const connect = `connect it first (packetagent mcp connect --url ${server.transport === 'http' ? server.url : ''} --credential ${credential}, or from the console)`;
  if (error instanceof RemoteCommandError && error.code === 'credential_not_found') return `${name} authorizes with OAuth and ${credential} is not connected: ${connect}`;
  if (error instanceof RemoteCommandError && error.code === OAuthErrorCodes.reconnectRequired) return `${name}: ${error.message}; ${connect}`;
  if (error instanceof RemoteCommandError) return `${name}: its OAuth connection ${credential} gave no token (${error.code}): ${error.message}`;
  if (error instanceof NoHandlerError) return `${name} was not listed: the vault, which holds its OAuth connection, did not answer`;
  return `${name}: its OAuth connection ${credential} gave no token: ${error instanceof Error ? error.message : String(error)}`;
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
