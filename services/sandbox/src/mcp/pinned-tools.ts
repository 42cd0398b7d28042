import { canonicalJson, McpErrorCodes, McpToolAnnotationsSchema, McpToolNameSchema, mcpToolDigest, PinnedMcpToolSchema, type JsonValue, type PinnedMcpTool } from '@packetagent/contracts';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpCallError } from './mcp-call-error';

/** Pages of tools/list read before giving up on a server that keeps answering with a cursor. */
export const MAX_TOOL_PAGES = 100;

export interface ListedTools {
  tools: PinnedMcpTool[];
  skipped: Array<{ name: string; reason: string }>;
}

/** A tool as the server listed it, in the form a version pins (digest included), or why it cannot be pinned. */
export function pinTool(tool: Tool): { ok: true; tool: PinnedMcpTool } | { ok: false; reason: string } {
  if (!McpToolNameSchema.safeParse(tool.name).success) return { ok: false, reason: 'the name is not letters, digits, _, . and - (at most 128), so mcp:<server>/<tool> cannot name it' };
  const annotations = McpToolAnnotationsSchema.safeParse(tool.annotations ?? {});
  if (!annotations.success) return { ok: false, reason: 'its annotations are not of the expected types' };
  const fields = { name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as PinnedMcpTool['inputSchema'], annotations: annotations.data };
  const parsed = PinnedMcpToolSchema.safeParse({ ...fields, digest: mcpToolDigest(fields) });
  if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ') };
  return { ok: true, tool: parsed.data };
}

/** Every tool of every page, pinned; a server that keeps paging past MAX_TOOL_PAGES breaks the protocol. */
export async function listAllTools(server: string, page: (cursor: string | undefined) => Promise<{ tools: Tool[]; nextCursor?: string | undefined }>): Promise<ListedTools> {
  const listed: ListedTools = { tools: [], skipped: [] };
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 0; pages < MAX_TOOL_PAGES; pages++) {
    const answer = await page(cursor);
    for (const tool of answer.tools) {
      if (seen.has(tool.name)) throw new McpCallError(McpErrorCodes.protocol, `${server} listed the tool ${tool.name} twice`);
      seen.add(tool.name);
      const pinned = pinTool(tool);
      if (pinned.ok) listed.tools.push(pinned.tool);
      else listed.skipped.push({ name: tool.name.slice(0, 200), reason: pinned.reason });
    }
    if (!answer.nextCursor) return listed;
    cursor = answer.nextCursor;
  }
  throw new McpCallError(McpErrorCodes.protocol, `${server} answered tools/list with more than ${MAX_TOOL_PAGES} pages`);
}

function differences(pinned: PinnedMcpTool, now: PinnedMcpTool): string[] {
  const same = (a: object, b: object) => canonicalJson(a as JsonValue) === canonicalJson(b as JsonValue);
  const changed: string[] = [];
  if (pinned.description !== now.description) changed.push('description');
  if (!same(pinned.inputSchema, now.inputSchema)) changed.push('input schema');
  if (!same(pinned.annotations, now.annotations)) changed.push('annotations');
  return changed;
}

/**
 * Refuses a call whose pinned tool the server no longer lists as it was pinned: removed, or
 * changed (which parts). A tool the server added is never callable: it has no pin.
 */
export function checkPin(server: string, pinned: PinnedMcpTool, listed: ReadonlyMap<string, PinnedMcpTool>): void {
  const own = mcpToolDigest(pinned);
  if (own !== pinned.digest) throw new McpCallError(McpErrorCodes.toolChanged, `the pin of ${pinned.name} does not hold: its digest ${pinned.digest} is not the digest of its fields (${own})`);
  const now = listed.get(pinned.name);
  if (!now) throw new McpCallError(McpErrorCodes.toolChanged, `${server} no longer lists the tool ${pinned.name} (removed since it was pinned with digest ${pinned.digest.slice(0, 12)})`);
  if (now.digest !== pinned.digest) {
    throw new McpCallError(McpErrorCodes.toolChanged, `${server} changed the tool ${pinned.name} since it was pinned: its ${differences(pinned, now).join(' and ')} differ (pinned digest ${pinned.digest.slice(0, 12)}, now ${now.digest.slice(0, 12)})`);
  }
}
