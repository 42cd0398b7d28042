import { z } from 'zod';
import {
  approvalMode,
  approvalRules,
  ApprovalSpecSchema,
  canonicalJson,
  ComputerNameSchema,
  isKnownTool,
  KNOWN_TOOLS,
  MCP_TOOL,
  normaliseResource,
  sha256Hex,
  type Approval,
  type ApprovalRules,
  type JsonValue,
  type ToolName,
} from '@packetagent/contracts';
import { coveredMcpTools, type CompiledMcpTool, type McpServerPins } from './mcp-grants';

/** One tool's grant, ready to evaluate calls against. */
export interface CompiledGrant {
  tool: ToolName;
  verbs: string[];
  /** Normalised and sorted; null means any resource of the tool's kind. */
  resources: string[] | null;
  /** The mode: whether a person is asked. */
  approval: Approval;
  /** Deadline, reminder, escalation, quorum and approvers of an approval, when the grant sets them; null otherwise. */
  approvalRules: ApprovalRules | null;
  credentials: string[];
  /** Deadline of an approval for this tool, when the grant sets one. */
  approvalTimeoutSeconds: number | null;
  /** run_command only: the registered computers its calls may run on, sorted; null for the local sandbox only. */
  computers: string[] | null;
  /** mcp only: the pinned tools its resources cover, sorted; a call of any other tool is denied. Null for other tools. */
  mcpTools: CompiledMcpTool[] | null;
}

export interface GrantSet {
  effectiveDigest: string;
  grants: CompiledGrant[];
  /** SHA-256 of the canonical JSON of {effectiveDigest, grants}. */
  grantsDigest: string;
}

export interface CompileIssue {
  index: number;
  message: string;
}

const LimitGrant = z.object({
  tool: z.string(),
  verbs: z.array(z.string()).default([]),
  resources: z.array(z.string()).optional(),
  approval: ApprovalSpecSchema.default('always'),
  credentials: z.array(z.string()).default([]),
  approvalTimeoutSeconds: z.number().int().positive().optional(),
  computers: z.array(z.string()).optional(),
});

const sorted = (values: Iterable<string>): string[] => [...new Set(values)].sort();

const byToolThenResources = (a: CompiledGrant, b: CompiledGrant): number => {
  const ka = `${a.tool}\u0000${(a.resources ?? []).join('\u0000')}`;
  const kb = `${b.tool}\u0000${(b.resources ?? []).join('\u0000')}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/**
 * Compiles a deployment's effective tool grants (`limits.tools`) deterministically: known tools
 * only, verbs limited to the tool's, resources normalised, everything sorted. Anything that does
 * not compile is left out, so a damaged grant can only grant less. `mcp` may be granted several
 * times, each resource by one grant only; its grants keep the pinned tools of `mcpServers` they
 * cover (none when the servers are not known).
 */
export function compileGrants(
  effectiveDigest: string,
  tools: readonly JsonValue[],
  mcpServers: readonly McpServerPins[] = [],
): { set: GrantSet; issues: CompileIssue[] } {
  const issues: CompileIssue[] = [];
  const byTool = new Map<ToolName, CompiledGrant>();
  const mcpGrants: CompiledGrant[] = [];
  const mcpResources = new Set<string>();
  for (const [index, raw] of tools.entries()) {
    const parsed = LimitGrant.safeParse(raw);
    if (!parsed.success) {
      issues.push({ index, message: 'not a tool grant' });
      continue;
    }
    const grant = parsed.data;
    if (!isKnownTool(grant.tool) || (grant.tool !== MCP_TOOL && byTool.has(grant.tool))) {
      issues.push({ index, message: isKnownTool(grant.tool) ? `second grant for ${grant.tool}` : `unknown tool "${grant.tool}"` });
      continue;
    }
    const known = KNOWN_TOOLS[grant.tool].verbs as readonly string[];
    const resources: string[] = [];
    for (const resource of grant.resources ?? []) {
      const checked = normaliseResource(grant.tool, resource);
      if (checked.ok) resources.push(checked.value);
      else issues.push({ index, message: checked.message });
    }
    let computers: string[] | null = null;
    if (grant.computers !== undefined && grant.tool !== 'run_command' && grant.tool !== MCP_TOOL) {
      issues.push({ index, message: `${grant.tool} takes no computers` });
    } else if (grant.computers !== undefined) {
      const named = grant.computers.filter((name) => ComputerNameSchema.safeParse(name).success);
      if (named.length < grant.computers.length) issues.push({ index, message: 'a computer name is not valid' });
      computers = named.length > 0 ? sorted(named) : null;
    }
    const compiled: CompiledGrant = {
      tool: grant.tool,
      verbs: sorted(grant.verbs.filter((verb) => known.includes(verb))),
      // A list whose every entry failed to compile grants nothing, not everything.
      resources: grant.resources === undefined ? null : sorted(resources),
      approval: approvalMode(grant.approval),
      approvalRules: approvalRules(grant.approval),
      credentials: sorted(grant.credentials),
      approvalTimeoutSeconds: grant.approvalTimeoutSeconds ?? null,
      computers,
      mcpTools: null,
    };
    if (grant.tool !== MCP_TOOL) {
      byTool.set(grant.tool, compiled);
      continue;
    }
    // Which grant decides a call must not depend on the order grants were written in.
    const fresh = sorted(resources).filter((resource) => !mcpResources.has(resource));
    if (fresh.length < resources.length) issues.push({ index, message: 'second grant for an mcp resource: left out of this grant' });
    if (fresh.length === 0) continue;
    for (const resource of fresh) mcpResources.add(resource);
    mcpGrants.push({ ...compiled, resources: fresh, mcpTools: coveredMcpTools(fresh, mcpServers) });
  }
  const grants = [...byTool.values(), ...mcpGrants].sort(byToolThenResources);
  return { set: { effectiveDigest, grants, grantsDigest: grantsDigest(effectiveDigest, grants) }, issues };
}

/**
 * A grant without computers, MCP tools or approval rules is hashed without those fields, so every set compiled
 * before they existed keeps its digest (and still verifies as stored).
 */
export function grantsDigest(effectiveDigest: string, grants: readonly CompiledGrant[]): string {
  const hashed = grants.map(({ computers, mcpTools, approvalRules, ...rest }) => ({
    ...rest,
    ...(approvalRules === null || approvalRules === undefined ? {} : { approvalRules: approvalRules as unknown as JsonValue }),
    ...(computers === null || computers === undefined ? {} : { computers }),
    ...(mcpTools === null || mcpTools === undefined ? {} : { mcpTools }),
  }));
  return sha256Hex(canonicalJson({ effectiveDigest, grants: hashed as unknown as JsonValue }));
}

/** A stored grant as compiled: sets stored before computers, MCP or approval rules existed lack those fields. */
export function storedGrant(grant: CompiledGrant): CompiledGrant {
  return { ...grant, approvalRules: grant.approvalRules ?? null, computers: grant.computers ?? null, mcpTools: grant.mcpTools ?? null };
}
