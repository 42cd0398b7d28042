import { mcpServerCredential, McpServerNameSchema, McpToolNameSchema, type JsonObject, type JsonValue, type McpCallResult, type ParsedMcpServerSpec } from '@packetagent/contracts';
import type { CatalogueServer } from '../../mcp/mcp-catalogue';
import { z } from 'zod';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { redactBulk } from '../../internal/text';

const ArgsSchema = z.strictObject({
  server: McpServerNameSchema.describe('The MCP server, as the worker definition names it under mcp.'),
  tool: McpToolNameSchema.describe('The tool of that server, as the version pinned it.'),
  arguments: z.record(z.string(), z.json()).default({}).describe("The tool's arguments, as its input schema describes them."),
});

export type McpArgs = z.output<typeof ArgsSchema>;

function callOutput(result: McpCallResult): JsonObject {
  const output: JsonObject = { ok: result.ok, preview: result.preview, bytes: result.bytes, durationMs: result.durationMs };
  if (result.result) output['result'] = { digest: result.result.$payload.digest, size: result.result.$payload.size };
  // A small result travels whole and stays whole in the run's record, with no reference to resolve.
  if (result.value !== undefined) output['value'] = result.value as JsonValue;
  if (result.error) output['error'] = result.error;
  return output;
}

/** The server as the sandbox connects to it: its spec without the tools the version pinned. */
function specOf(server: CatalogueServer): ParsedMcpServerSpec {
  const { tools: _pinned, ...spec } = server;
  return spec;
}

/**
 * One call of a tool a version pinned from an MCP server. The resource policy checks is
 * `<server>/<tool>`; without the server being trusted every call counts as mutating and not
 * idempotent (its annotations are the server's claims, not facts).
 */
export const mcpTool: BuiltinTool<McpArgs> = {
  descriptor: {
    tool: 'mcp',
    description: "Calls a tool of one of the worker's MCP servers (only the tools the worker's version pinned), with arguments following that tool's input schema.",
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: () => 'call',
    resource: (args) => `${args.server}/${args.tool}`,
    mutating: () => true,
    idempotentByKey: () => false,
    credentials: () => [],
    redact: (args) => ({ server: args.server, tool: args.tool, arguments: redactBulk(args.arguments) }),
  },

  async execute(args, ctx, env) {
    if (!env.mcp) return failure('mcp_unavailable', 'no MCP client is configured: MCP tools are called through the sandbox service only');
    const entry = ctx.mcp?.find(args.server, args.tool);
    if (!entry) return failure('mcp_tool_not_pinned', `mcp:${args.server}/${args.tool} is not among the tools this run's version pinned and its grants cover`);
    const credential = mcpServerCredential(entry.server);
    const bearer = credential ? ctx.credentials[credential] : undefined;
    if (credential && !bearer) return failure('credential_unavailable', `the credential ${credential} of MCP server "${args.server}" was not resolved for this call`);
    const computer = entry.server.transport === 'stdio' ? entry.server.computer : undefined;
    if (computer && !ctx.computerGrant) return failure('computer_key_unavailable', `MCP server "${args.server}" runs on computer "${computer}", and policy granted no key for it`);
    let result: McpCallResult;
    try {
      result = await env.mcp.call(
        { workspaceId: ctx.workspaceId, runId: ctx.runId, callKey: ctx.idempotencyKey, server: specOf(entry.server), tool: entry.tool, arguments: args.arguments, ...(bearer ? { bearer } : {}), ...(computer ? { computerGrant: ctx.computerGrant } : {}) },
        ctx.signal,
      );
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'mcp_unavailable';
      return failure(code, error instanceof Error ? error.message : String(error));
    }
    const output = callOutput(result);
    const summary = `mcp:${args.server}/${args.tool} ${result.ok ? 'answered' : 'failed'} in ${result.durationMs} ms (${result.bytes} bytes)`;
    if (result.ok) return { ok: true, output, summary };
    const error = result.error ?? { code: 'mcp_tool_error', message: 'the tool reported an error' };
    return { ok: false, output: { ...output, error }, summary: `${error.code}: ${summary}`, error };
  },
};
