/**
 * What a grant's resources are:
 * - `url`: `scheme://host[:port][/path-glob]` (http and https only);
 * - `path`: a relative path glob inside the run workspace;
 * - `command`: `program [args-glob]`;
 * - `address`: a Slack channel (`#name`) or an email address (`name@domain`, `*@domain`);
 * - `mcp`: `<server>/<tool>` or `<server>/*`, a server declared under the definition's `mcp`;
 * - `none`: the tool takes no verbs and no resources (control tools).
 */
export type ResourceKind = 'url' | 'path' | 'command' | 'address' | 'mcp' | 'none';

export interface KnownTool {
  readonly verbs: readonly string[];
  readonly resourceKind: ResourceKind;
  /** Verbs that change state somewhere (the workspace or the outside world). */
  readonly mutatingVerbs: readonly string[];
}

const HTTP_VERBS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const KNOWN_TOOLS = {
  http_fetch: { verbs: HTTP_VERBS, resourceKind: 'url', mutatingVerbs: ['POST', 'PUT', 'PATCH', 'DELETE'] },
  github_api: { verbs: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], resourceKind: 'url', mutatingVerbs: ['POST', 'PUT', 'PATCH', 'DELETE'] },
  browser: { verbs: ['navigate', 'read', 'click', 'type', 'screenshot'], resourceKind: 'url', mutatingVerbs: ['click', 'type'] },
  run_command: { verbs: ['exec'], resourceKind: 'command', mutatingVerbs: ['exec'] },
  files: { verbs: ['read', 'write', 'list', 'delete'], resourceKind: 'path', mutatingVerbs: ['write', 'delete'] },
  // clone writes into the run workspace, so it counts as mutating like files.write.
  git: { verbs: ['clone', 'status', 'diff', 'commit', 'push'], resourceKind: 'url', mutatingVerbs: ['clone', 'commit', 'push'] },
  slack_post: { verbs: ['post'], resourceKind: 'address', mutatingVerbs: ['post'] },
  email_send: { verbs: ['send'], resourceKind: 'address', mutatingVerbs: ['send'] },
  // A server's annotations are only hints: without trust every MCP call counts as mutating.
  mcp: { verbs: ['call'], resourceKind: 'mcp', mutatingVerbs: ['call'] },
  finish: { verbs: [], resourceKind: 'none', mutatingVerbs: [] },
  ask_owner: { verbs: [], resourceKind: 'none', mutatingVerbs: [] },
  propose_criteria: { verbs: [], resourceKind: 'none', mutatingVerbs: [] },
  update_criteria: { verbs: [], resourceKind: 'none', mutatingVerbs: [] },
} as const satisfies Record<string, KnownTool>;

export type ToolName = keyof typeof KNOWN_TOOLS;

export const TOOL_NAMES = Object.keys(KNOWN_TOOLS) as ToolName[];

export function isKnownTool(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(KNOWN_TOOLS, name);
}

export function knownTool(name: ToolName): KnownTool {
  return KNOWN_TOOLS[name];
}

/** Tools whose verbs default to all of their verbs when a grant omits them. */
export function verbsDefaultToAll(name: ToolName): boolean {
  const kind = KNOWN_TOOLS[name].resourceKind;
  return kind === 'none' || kind === 'address' || kind === 'mcp';
}

/** The one tool a definition may grant several times, each grant keyed by the resources it names. */
export const MCP_TOOL = 'mcp' satisfies ToolName;
