import { z } from 'zod';
import {
  McpHttpServerFields,
  McpServerSpecSchema,
  McpStdioServerSchema,
  oneWayToAuthenticate,
  PinnedMcpToolSchema,
  type ParsedMcpServerSpec,
  type PinnedMcpTool,
} from '../sandbox/mcp.v1';
import { definitionErrorMap } from './issues';
import { splitMcpResource } from './resources';

export const MAX_MCP_SERVERS = 16;

/**
 * A server as a definition declares it. In a stored version it also carries `tools`: the list
 * the server answered when the version was created, which is all the version may call there.
 */
export type McpServer = ParsedMcpServerSpec & { tools?: PinnedMcpTool[] };
export type PinnedMcpServer = ParsedMcpServerSpec & { tools: PinnedMcpTool[] };

/** Whether a definition is a source someone wrote or a version as stored (its servers' tools pinned). */
export type DefinitionForm = 'source' | 'stored';

const PINNED_BY_VERSION = "written by the version, not the source: a server's tools are pinned from its answer when the version is created";

const StoredMcpServerSchema = z.discriminatedUnion('transport', [
  McpHttpServerFields.extend({ tools: z.array(PinnedMcpToolSchema).max(1024) }).refine(...oneWayToAuthenticate),
  McpStdioServerSchema.extend({ tools: z.array(PinnedMcpToolSchema).max(1024) }),
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mcpServerSchema(form: DefinitionForm): z.ZodType<McpServer> {
  return z.unknown().transform((value, ctx): McpServer => {
    if (form === 'source' && isPlainObject(value) && Object.hasOwn(value, 'tools')) {
      ctx.addIssue({ code: 'custom', path: ['tools'], message: PINNED_BY_VERSION });
      return z.NEVER;
    }
    const schema = form === 'source' ? McpServerSpecSchema : StoredMcpServerSchema;
    // A nested parse does not inherit the caller's error map.
    const result = (schema as z.ZodType<McpServer>).safeParse(value, { error: definitionErrorMap });
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue({ ...issue });
    return z.NEVER;
  }) as unknown as z.ZodType<McpServer>;
}

/** `mcp`: at most 16 servers with unique names. */
export function mcpServersSchema(form: DefinitionForm): z.ZodType<McpServer[]> {
  return z
    .array(mcpServerSchema(form))
    .max(MAX_MCP_SERVERS)
    .superRefine((servers, ctx) => {
      const seen = new Map<string, number>();
      servers.forEach((server, index) => {
        const first = seen.get(server.name);
        if (first === undefined) seen.set(server.name, index);
        else ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `duplicate server "${server.name}" (first at mcp[${first}])` });
      });
    }) as unknown as z.ZodType<McpServer[]>;
}

interface McpGrantLike {
  tool: string;
  resources?: string[];
  computers?: string[];
}

/**
 * Where an MCP grant names a server the definition does not declare or, in a stored version, a
 * tool its server did not list when the version pinned it. `tools[i].tool` for a grant of one
 * resource (as `mcp:<server>/<tool>` is stored), `tools[i].resources[j]` otherwise.
 */
export function mcpGrantIssues(grants: readonly McpGrantLike[], servers: readonly McpServer[], form: DefinitionForm): Array<{ path: PropertyKey[]; message: string }> {
  const byName = new Map(servers.map((server) => [server.name, server]));
  const issues: Array<{ path: PropertyKey[]; message: string }> = [];
  grants.forEach((grant, index) => {
    if (grant.tool !== 'mcp') return;
    const resources = grant.resources ?? [];
    resources.forEach((resource, j) => {
      const path = resources.length === 1 ? [index, 'tool'] : [index, 'resources', j];
      const split = splitMcpResource(resource);
      if (!split) return;
      const server = byName.get(split.server);
      if (!server) {
        const declared = servers.map((candidate) => candidate.name).join(', ') || 'none';
        issues.push({ path, message: `mcp:${resource} names the server "${split.server}", which the definition does not declare under mcp (declared: ${declared})` });
        return;
      }
      const computer = server.transport === 'stdio' ? server.computer : undefined;
      if (computer && !grant.computers?.includes(computer)) {
        issues.push({ path, message: `mcp:${resource}: the server "${split.server}" runs on computer "${computer}", so the grant must name it under computers` });
      }
      if (!computer && grant.computers?.length) {
        issues.push({ path: [index, 'computers'], message: `mcp:${resource}: the server "${split.server}" runs in the sandbox, not on a computer` });
      }
      if (form === 'stored' && split.tool !== '*' && !server.tools?.some((tool) => tool.name === split.tool)) {
        const listed = server.tools?.map((tool) => tool.name).join(', ') || 'none';
        issues.push({ path, message: `mcp:${resource}: the server "${split.server}" does not list the tool "${split.tool}" (it lists: ${listed})` });
      }
    });
  });
  return issues;
}
