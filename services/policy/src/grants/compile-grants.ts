import { z } from 'zod';
import {
  APPROVAL_STRICTNESS,
  canonicalJson,
  isKnownTool,
  KNOWN_TOOLS,
  normaliseResource,
  sha256Hex,
  type Approval,
  type JsonValue,
  type ToolName,
} from '@packetagent/contracts';

/** One tool's grant, ready to evaluate calls against. */
export interface CompiledGrant {
  tool: ToolName;
  verbs: string[];
  /** Normalised and sorted; null means any resource of the tool's kind. */
  resources: string[] | null;
  approval: Approval;
  credentials: string[];
  /** Deadline of an approval for this tool, when the grant sets one. */
  approvalTimeoutSeconds: number | null;
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
  approval: z.enum(APPROVAL_STRICTNESS as [Approval, ...Approval[]]).default('always'),
  credentials: z.array(z.string()).default([]),
  approvalTimeoutSeconds: z.number().int().positive().optional(),
});

const sorted = (values: Iterable<string>): string[] => [...new Set(values)].sort();

/**
 * Compiles a deployment's effective tool grants (`limits.tools`) deterministically: known tools
 * only, verbs limited to the tool's, resources normalised, everything sorted. Anything that does
 * not compile is left out, so a damaged grant can only grant less.
 */
export function compileGrants(effectiveDigest: string, tools: readonly JsonValue[]): { set: GrantSet; issues: CompileIssue[] } {
  const issues: CompileIssue[] = [];
  const byTool = new Map<ToolName, CompiledGrant>();
  for (const [index, raw] of tools.entries()) {
    const parsed = LimitGrant.safeParse(raw);
    if (!parsed.success) {
      issues.push({ index, message: 'not a tool grant' });
      continue;
    }
    const grant = parsed.data;
    if (!isKnownTool(grant.tool) || byTool.has(grant.tool)) {
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
    byTool.set(grant.tool, {
      tool: grant.tool,
      verbs: sorted(grant.verbs.filter((verb) => known.includes(verb))),
      // A list whose every entry failed to compile grants nothing, not everything.
      resources: grant.resources === undefined ? null : sorted(resources),
      approval: grant.approval,
      credentials: sorted(grant.credentials),
      approvalTimeoutSeconds: grant.approvalTimeoutSeconds ?? null,
    });
  }
  const grants = [...byTool.values()].sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  return { set: { effectiveDigest, grants, grantsDigest: grantsDigest(effectiveDigest, grants) }, issues };
}

export function grantsDigest(effectiveDigest: string, grants: readonly CompiledGrant[]): string {
  return sha256Hex(canonicalJson({ effectiveDigest, grants: grants as unknown as JsonValue }));
}
