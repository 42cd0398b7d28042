import { MCP_TOOL, resourceCovers, splitMcpResource, type PinnedMcpTool } from '@packetagent/contracts';

/** What policy needs of a server the effective definition declares: the tools its version pinned. */
export interface McpServerPins {
  name: string;
  tools: ReadonlyArray<Pick<PinnedMcpTool, 'name' | 'annotations'>>;
}

/** A pinned tool an `mcp` grant covers, with what its annotations make stricter. */
export interface CompiledMcpTool {
  /** `<server>/<tool>`. */
  resource: string;
  /**
   * The tool says it may destroy (`destructiveHint`): a call needs a person's approval every
   * time. A hint may only make policy stricter, so the server's trust does not matter here.
   */
  destructive: boolean;
}

/** The pinned tools a grant's resources cover, sorted; a server the definition lacks covers none. */
export function coveredMcpTools(resources: readonly string[], servers: readonly McpServerPins[]): CompiledMcpTool[] {
  const covered = new Map<string, CompiledMcpTool>();
  for (const server of servers) {
    for (const tool of server.tools) {
      const resource = `${server.name}/${tool.name}`;
      if (resources.some((granted) => resourceCovers(MCP_TOOL, granted, resource))) {
        covered.set(resource, { resource, destructive: tool.annotations.destructiveHint === true });
      }
    }
  }
  return [...covered.values()].sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
}

/**
 * The `mcp` grant that decides a call of `resource` (normalised): the one naming the tool
 * itself, else the one naming its server's `*`. Compiled sets name each resource once.
 */
export function mostSpecificMcpGrant<Grant extends { tool: string; resources: string[] | null }>(grants: readonly Grant[], resource: string): Grant | undefined {
  const split = splitMcpResource(resource);
  if (!split) return undefined;
  const mcpGrants = grants.filter((grant) => grant.tool === MCP_TOOL);
  return mcpGrants.find((grant) => grant.resources?.includes(resource)) ?? mcpGrants.find((grant) => grant.resources?.includes(`${split.server}/*`));
}
