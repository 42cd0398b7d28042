import type { WorkerDefinition } from '@packetagent/contracts';
import { McpCatalogue, type CatalogueServer } from '@packetagent/tools';

/** The run's MCP tools: its version's pinned tools that one of its `mcp` grants covers. */
export function mcpCatalogueOf(definition: Pick<WorkerDefinition, 'tools' | 'mcp'>): McpCatalogue {
  // A stored version's servers carry their pinned tools; a server without them offers nothing.
  const servers: CatalogueServer[] = (definition.mcp ?? []).flatMap((server) => (server.tools ? [{ ...server, tools: server.tools }] : []));
  if (servers.length === 0) return McpCatalogue.empty();
  const resources = definition.tools.filter((grant) => grant.tool === 'mcp').flatMap((grant) => grant.resources ?? []);
  return new McpCatalogue(servers, resources);
}
