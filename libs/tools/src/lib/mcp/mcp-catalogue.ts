import { createHash } from 'node:crypto';
import type { JsonObject, ParsedMcpServerSpec, PinnedMcpTool } from '@packetagent/contracts';
import type { ToolSpec } from '../tool.types';

/** A server as a run's version pinned it. */
export type CatalogueServer = ParsedMcpServerSpec & { tools: readonly PinnedMcpTool[] };

/** One MCP tool the run may call, under the function name the model calls it by. */
export interface CatalogueEntry {
  /** What the model calls: `<server>__<tool>`, made to fit providers' function-name rules. */
  functionName: string;
  server: CatalogueServer;
  tool: PinnedMcpTool;
  /** A grant of the run covers it: the model is shown it. Others are still planned, so policy refuses them on the record. */
  granted: boolean;
}

/** Providers accept function names of letters, digits, _ and -, 64 at most. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function mcpFunctionName(server: string, tool: string): string {
  const plain = `${server}__${tool}`;
  if (FUNCTION_NAME.test(plain)) return plain;
  // `.` is not allowed and long names are cut: a digest of the real pair keeps each name unique.
  const suffix = createHash('sha256').update(`${server}/${tool}`).digest('hex').slice(0, 8);
  return `${plain.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 55)}_${suffix}`;
}

/** Whether a grant resource (`<server>/<tool>` or `<server>/*`) covers a tool. */
function covers(resource: string, server: string, tool: string): boolean {
  return resource === `${server}/${tool}` || resource === `${server}/*`;
}

/**
 * The MCP tools of a run: the pinned tools of its version's servers. The model is shown those one
 * of its `mcp` grants covers; a call of another pinned tool is planned and refused by policy (on
 * the record), and a tool the version did not pin is not a tool at all.
 */
export class McpCatalogue {
  private readonly byFunction = new Map<string, CatalogueEntry>();
  private readonly byPair = new Map<string, CatalogueEntry>();

  constructor(servers: readonly CatalogueServer[], grantedResources: readonly string[]) {
    for (const server of servers) {
      for (const tool of server.tools) {
        const granted = grantedResources.some((resource) => covers(resource, server.name, tool.name));
        const entry = { functionName: mcpFunctionName(server.name, tool.name), server, tool, granted };
        this.byFunction.set(entry.functionName, entry);
        this.byPair.set(`${server.name}/${tool.name}`, entry);
      }
    }
  }

  static empty(): McpCatalogue {
    return new McpCatalogue([], []);
  }

  /** Pinned tools, granted or not. */
  get size(): number {
    return this.byFunction.size;
  }

  byFunctionName(name: string): CatalogueEntry | undefined {
    return this.byFunction.get(name);
  }

  find(server: string, tool: string): CatalogueEntry | undefined {
    return this.byPair.get(`${server}/${tool}`);
  }

  /** The tools as the model is shown them: their pinned descriptions and input schemas. */
  specs(): ToolSpec[] {
    return [...this.byFunction.values()].filter((entry) => entry.granted).map((entry) => ({
      name: entry.functionName,
      description: `${entry.tool.description || entry.tool.annotations.title || entry.tool.name} (MCP server "${entry.server.name}", tool "${entry.tool.name}")`.slice(0, 8_192),
      parameters: (entry.tool.inputSchema as JsonObject) ?? { type: 'object' },
    }));
  }

  /**
   * What policy may assume of a call: annotations count only for a trusted server; anywhere else
   * every call is mutating and not idempotent.
   */
  static effects(entry: CatalogueEntry): { mutating: boolean; idempotentByKey: boolean } {
    if (!entry.server.trusted) return { mutating: true, idempotentByKey: false };
    const { readOnlyHint, idempotentHint } = entry.tool.annotations;
    return { mutating: readOnlyHint !== true, idempotentByKey: readOnlyHint === true || idempotentHint === true };
  }
}
