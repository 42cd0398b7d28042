import { isKnownTool, KNOWN_TOOLS, MCP_TOOL, normaliseResource, resourceCovers, type DecisionReasonCode, type ToolName } from '@packetagent/contracts';
import type { CompiledGrant, GrantSet } from './compile-grants';
import { mostSpecificMcpGrant } from './mcp-grants';

export interface Call {
  tool: string;
  verb: string;
  resource: string | null;
  credentials: readonly string[];
  /** The registered computer the call runs on; absent for the local sandbox. */
  computer?: string | undefined;
}

export type CallCheck =
  | { ok: false; code: DecisionReasonCode; text: string }
  | {
      ok: true;
      grant: CompiledGrant;
      /** What identical calls share: the normalised resource (with its query, if any), '' for none. */
      resourceKey: string;
    };

const deny = (code: DecisionReasonCode, text: string): CallCheck => ({ ok: false, code, text });

/**
 * A concrete URL splits into the part grants are written against (origin and path) and the
 * query, which no grant pattern can name. The query and fragment are cut at the first `?` or
 * `#`, exactly where a URL parser ends the authority and the path.
 */
function splitUrl(raw: string): { target: string; query: string | null } {
  const cut = raw.search(/[?#]/);
  if (cut < 0) return { target: raw, query: null };
  const queryEnd = raw.indexOf('#', cut);
  const query = raw[cut] === '?' ? raw.slice(cut + 1, queryEnd < 0 ? undefined : queryEnd) : null;
  return { target: raw.slice(0, cut), query: query === '' ? null : query };
}

/**
 * Checks one call against the compiled grants, rule by rule, and answers with the first rule it
 * fails; texts never quote the resource, which may hold secrets.
 */
export function checkCall(call: Call, grants: GrantSet): CallCheck {
  if (!isKnownTool(call.tool)) return deny('unknown_tool', `"${call.tool}" is not a known tool`);
  const tool: ToolName = call.tool;
  const found = tool === MCP_TOOL ? mcpGrantOf(call, grants) : grants.grants.find((candidate) => candidate.tool === tool);
  if (found && 'ok' in found) return found;
  const grant = found;
  if (!grant) return deny('tool_not_granted', `${tool} is not granted to this deployment`);
  const kind = KNOWN_TOOLS[tool].resourceKind;

  if (kind === 'none') {
    if (call.verb !== '') return deny('verb_not_granted', `${tool} takes no verb`);
    if (call.resource !== null) return deny('resource_not_expected', `${tool} takes no resource`);
  } else if (!grant.verbs.includes(call.verb)) {
    return deny('verb_not_granted', `${tool} is not granted the verb "${call.verb}"`);
  }

  let resourceKey = '';
  if (kind !== 'none') {
    if (call.resource === null) return deny('resource_required', `${tool} calls must name their resource`);
    let raw = call.resource;
    let query: string | null = null;
    if (kind === 'url') {
      ({ target: raw, query } = splitUrl(call.resource));
      // Credentials in a URL would bypass the vault; the normaliser refuses them too.
      if (/^[^:]*:\/\/[^/]*@/.test(raw)) return deny('resource_invalid', 'the URL carries userinfo; credentials come from the vault only');
    }
    const normalised = normaliseResource(tool, raw);
    if (!normalised.ok) return deny('resource_invalid', `the resource is not valid for ${tool}: ${normalised.message}`);
    const covered = grant.resources === null || grant.resources.some((granted) => resourceCovers(tool, granted, normalised.value));
    if (!covered) return deny('resource_not_granted', `no resource granted to ${tool} covers the requested one`);
    resourceKey = query === null ? normalised.value : `${normalised.value}?${query}`;
  }

  let decided = grant;
  if (tool === MCP_TOOL) {
    const pinned = grant.mcpTools?.find((candidate) => candidate.resource === resourceKey);
    if (!pinned) return deny('resource_not_granted', 'the version pinned no such tool of the MCP server');
    // The tool's own hint makes every call wait for a person, whatever the grant says.
    if (pinned.destructive) decided = { ...grant, approval: 'always' };
  }

  const missing = call.credentials.filter((credential) => !grant.credentials.includes(credential));
  if (missing.length > 0) return deny('credential_not_granted', `${tool} is not granted the credential(s) ${missing.sort().join(', ')}`);

  if (call.computer !== undefined) {
    if (tool !== 'run_command' && tool !== MCP_TOOL) return deny('computer_not_granted', `${tool} calls do not run on computers`);
    if (!grant.computers?.includes(call.computer)) return deny('computer_not_granted', `${tool} is not granted the computer "${call.computer}"`);
    // A program name holds no ':', so this key is never a local command's: approvals of identical
    // calls do not carry over between computers, nor to or from the local sandbox.
    resourceKey = `computer:${call.computer} ${resourceKey}`;
  }
  return { ok: true, grant: decided, resourceKey };
}

/**
 * The `mcp` grant deciding the call: the one naming its tool, else its server's `*`. A call of
 * no MCP grant at all is `tool_not_granted`, one no grant covers `resource_not_granted`.
 */
function mcpGrantOf(call: Call, grants: GrantSet): CompiledGrant | Extract<CallCheck, { ok: false }> | undefined {
  const mcpGrants = grants.grants.filter((candidate) => candidate.tool === MCP_TOOL);
  if (mcpGrants.length === 0) return undefined;
  if (call.resource === null) return deny('resource_required', 'mcp calls must name their resource') as Extract<CallCheck, { ok: false }>;
  const normalised = normaliseResource(MCP_TOOL, call.resource);
  if (!normalised.ok) return deny('resource_invalid', `the resource is not valid for mcp: ${normalised.message}`) as Extract<CallCheck, { ok: false }>;
  return mostSpecificMcpGrant(mcpGrants, normalised.value) ?? (deny('resource_not_granted', 'no resource granted to mcp covers the requested one') as Extract<CallCheck, { ok: false }>);
}
