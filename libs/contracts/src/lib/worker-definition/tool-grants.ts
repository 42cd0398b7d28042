import { z } from 'zod';
import { ComputerNameSchema } from '../sandbox/computer.v1';
import { KNOWN_TOOLS, MCP_TOOL, TOOL_NAMES, isKnownTool, verbsDefaultToAll, type ToolName } from './known-tools';
import { MAX_RESOURCE_LENGTH, normaliseResource } from './resources';
import type { ToolGrant } from './schema';
import { ApprovalSpecSchema, type ApprovalSpec } from './approval-rules';
import { CredentialName, duplicates, strict } from './schema-kit';

// Tool grants, shared by the definition and deployment overrides.

export const MAX_TOOLS = 64;

/** Most computers one run_command grant may name. */
export const MAX_GRANT_COMPUTERS = 32;

const RESOURCE_NOUN = {
  url: 'URL origins or globs',
  path: 'workspace path globs',
  command: 'command patterns',
  mcp: 'MCP tools ("<server>/<tool>" or "<server>/*")',
} as const;

const MCP_ID_PREFIX = 'mcp:';

/**
 * `{tool: "mcp:<server>/<tool>"}` (or `mcp:<server>/*`) is written for
 * `{tool: "mcp", verbs: ["call"], resources: ["<server>/<tool>"]}`; the id names the resource.
 */
function expandMcpToolId(raw: z.output<typeof RawGrant>, ctx: z.core.$RefinementCtx): z.output<typeof RawGrant> | typeof z.NEVER {
  if (!raw.tool.startsWith(MCP_ID_PREFIX)) return raw;
  const checked = normaliseResource(MCP_TOOL, raw.tool);
  if (!checked.ok) {
    ctx.addIssue({ code: 'custom', path: ['tool'], message: 'not an MCP tool id: expected "mcp:<server>/<tool>" or "mcp:<server>/*"' });
    return z.NEVER;
  }
  if (raw.resources !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['resources'], message: `${raw.tool} names its resource: list resources only with tool "mcp"` });
    return z.NEVER;
  }
  return { ...raw, tool: MCP_TOOL, resources: [checked.value] };
}

const RawGrant = strict({
  tool: z.string(),
  // Empty only for tools that take no verbs: a stored definition spells their grant with `verbs: []`.
  verbs: z.array(z.string()).optional(),
  resources: z.array(z.string().max(MAX_RESOURCE_LENGTH)).min(1).max(256).optional(),
  approval: ApprovalSpecSchema.optional(),
  credentials: z.array(CredentialName).max(32).optional(),
  computers: z.array(z.string()).max(MAX_GRANT_COMPUTERS).optional(),
});

/** A grant as written in deployment overrides: every field but `tool` optional, nothing defaulted. */
export interface ToolGrantOverride {
  tool: ToolName;
  verbs?: string[];
  resources?: string[];
  approval?: ApprovalSpec;
  credentials?: string[];
  /** Narrows run_command's computers; an empty list leaves the local sandbox only. */
  computers?: string[];
}

/** The only tool whose calls may name a registered computer to run on. */
const COMPUTER_TOOL: ToolName = 'run_command';

function checkGrant(written: z.output<typeof RawGrant>, ctx: z.core.$RefinementCtx, mode: 'definition' | 'override'): ToolGrantOverride | typeof z.NEVER {
  const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const raw = expandMcpToolId(written, ctx);
  if (raw === z.NEVER) return z.NEVER;
  if (!isKnownTool(raw.tool)) {
    issue(['tool'], `unknown tool "${raw.tool}" (known: ${TOOL_NAMES.join(', ')})`);
    return z.NEVER;
  }
  const tool = raw.tool;
  const spec = KNOWN_TOOLS[tool];
  const before = ctx.issues.length;
  if (spec.resourceKind === 'none') {
    if (raw.verbs?.length) issue(['verbs'], `${tool} takes no verbs`);
    if (raw.resources) issue(['resources'], `${tool} takes no resources`);
    if (raw.credentials?.length) issue(['credentials'], `${tool} takes no credentials`);
  } else {
    if (raw.verbs?.length === 0) issue(['verbs'], 'must not be empty');
    raw.verbs?.forEach((verb, index) => {
      if (!(spec.verbs as readonly string[]).includes(verb)) issue(['verbs', index], `unknown verb "${verb}" for ${tool} (known: ${spec.verbs.join(', ')})`);
    });
    for (const dup of duplicates(raw.verbs ?? [])) issue(['verbs', dup.index], `duplicate verb "${dup.value}"`);
    if (mode === 'definition' && !raw.verbs && !verbsDefaultToAll(tool)) {
      issue(['verbs'], `required for ${tool}: list the verbs to grant (${spec.verbs.join(', ')})`);
    }
    if ((mode === 'definition' || tool === MCP_TOOL) && !raw.resources && spec.resourceKind !== 'address') {
      issue(['resources'], `required for ${tool}: list the ${RESOURCE_NOUN[spec.resourceKind]} it may use`);
    }
  }
  let resources: string[] | undefined;
  if (raw.resources && spec.resourceKind !== 'none') {
    resources = [];
    for (const [index, value] of raw.resources.entries()) {
      const checked = normaliseResource(tool, value);
      if (checked.ok) resources.push(checked.value);
      else issue(['resources', index], checked.message);
    }
    if (ctx.issues.length === before) {
      for (const dup of duplicates(resources)) issue(['resources', dup.index], `duplicate of resources[${dup.first}] after normalisation`);
    }
  }
  for (const dup of duplicates(raw.credentials ?? [])) issue(['credentials', dup.index], `duplicate credential "${dup.value}"`);
  if (raw.computers !== undefined && tool !== COMPUTER_TOOL && tool !== 'mcp') {
    issue(['computers'], `${tool} takes no computers: only ${COMPUTER_TOOL} and the tools of MCP servers run on registered computers`);
  } else {
    raw.computers?.forEach((name, index) => {
      if (!ComputerNameSchema.safeParse(name).success) issue(['computers', index], 'a computer name starts with a lower-case letter and has only a-z, 0-9 and "-" (at most 63 characters)');
    });
    for (const dup of duplicates(raw.computers ?? [])) issue(['computers', dup.index], `duplicate computer "${dup.value}"`);
  }
  if (ctx.issues.length > before) return z.NEVER;

  const grant: ToolGrantOverride = { tool };
  if (raw.verbs?.length) grant.verbs = raw.verbs;
  if (resources) grant.resources = resources;
  if (raw.approval) grant.approval = raw.approval;
  if (raw.credentials) grant.credentials = raw.credentials;
  if (raw.computers) grant.computers = raw.computers;
  return grant;
}

const ToolGrantSchema: z.ZodType<ToolGrant> = RawGrant.transform((raw, ctx): ToolGrant => {
  const checked = checkGrant(raw, ctx, 'definition');
  if (checked === z.NEVER) return z.NEVER;
  const grant: ToolGrant = {
    tool: checked.tool,
    verbs: checked.verbs ?? [...KNOWN_TOOLS[checked.tool].verbs],
    approval: checked.approval ?? 'always',
    credentials: checked.credentials ?? [],
  };
  if (checked.resources) grant.resources = checked.resources;
  // Left out when empty, so a definition that names no computer keeps the digest it always had.
  if (checked.computers?.length) grant.computers = checked.computers;
  return grant;
}) as unknown as z.ZodType<ToolGrant>;

export const ToolGrantOverrideSchema: z.ZodType<ToolGrantOverride> = RawGrant.transform((raw, ctx) => checkGrant(raw, ctx, 'override')) as unknown as z.ZodType<ToolGrantOverride>;

/**
 * One grant per tool, except `mcp`: its grants are told apart by the resources they name, and a
 * resource is named by one of them only (an exact tool and its server's `*` may both be granted).
 */
function uniqueTools(grants: ReadonlyArray<{ tool: string; resources?: string[] }>, ctx: z.core.$RefinementCtx): void {
  const indexed = grants.map((grant, index) => ({ grant, index }));
  const single = indexed.filter(({ grant }) => grant.tool !== MCP_TOOL);
  for (const dup of duplicates(single, ({ grant }) => grant.tool)) {
    ctx.addIssue({ code: 'custom', path: [single[dup.index]!.index, 'tool'], message: `duplicate grant for "${dup.value}" (first at tools[${single[dup.first]!.index}])` });
  }
  const named = indexed.flatMap(({ grant, index }) => (grant.tool === MCP_TOOL ? (grant.resources ?? []).map((resource) => ({ resource, index })) : []));
  for (const dup of duplicates(named, ({ resource }) => resource)) {
    const { index, resource } = named[dup.index]!;
    const first = named[dup.first]!.index;
    if (index === first) continue;
    ctx.addIssue({ code: 'custom', path: [index, 'tool'], message: `duplicate grant for "mcp:${resource}" (first at tools[${first}])` });
  }
}

export const ToolsSchema = z.array(ToolGrantSchema).max(MAX_TOOLS).superRefine(uniqueTools);
export const ToolOverridesSchema = z.array(ToolGrantOverrideSchema).max(MAX_TOOLS).superRefine(uniqueTools);
