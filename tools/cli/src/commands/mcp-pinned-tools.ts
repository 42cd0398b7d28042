import { z } from 'zod';
import { MCP_TOOL, splitMcpResource, type Approval } from '@packetagent/contracts';

/** Only the fields read here: a stored definition carries much more, and may gain fields. */
const AnnotationsSchema = z.looseObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});
const PinnedToolSchema = z.looseObject({ name: z.string(), description: z.string().default(''), annotations: AnnotationsSchema.default({}), digest: z.string() });
const ServerSchema = z.looseObject({
  name: z.string(),
  transport: z.string(),
  url: z.string().optional(),
  command: z.string().optional(),
  args: z.array(z.string()).default([]),
  credential: z.string().optional(),
  trusted: z.boolean().default(false),
  timeoutMs: z.number().optional(),
  maxResultBytes: z.number().optional(),
  tools: z.array(PinnedToolSchema).default([]),
});
const GrantSchema = z.looseObject({
  tool: z.string(),
  verbs: z.array(z.string()).default([]),
  resources: z.array(z.string()).optional(),
  // Rules ({mode, deadline, quorum, ...}) are read for their mode: that is what decides whether a person is asked.
  approval: z.preprocess((value) => (typeof value === 'object' && value !== null && 'mode' in value ? (value as { mode: unknown }).mode : value), z.enum(['never', 'first_use', 'always']).default('always')),
});
export const StoredDefinitionSchema = z.looseObject({ mcp: z.array(ServerSchema).default([]), tools: z.array(GrantSchema).default([]) });
export type StoredDefinition = z.infer<typeof StoredDefinitionSchema>;
type Server = z.infer<typeof ServerSchema>;
type Grant = z.infer<typeof GrantSchema>;

/** What policy will assume of a call of the tool under this version's grants (before any deployment override narrows them). */
export interface ToolPolicy {
  callable: boolean;
  mutating: boolean;
  /** A call lost to a crash may be made again under its idempotency key; otherwise the run ends abandoned(uncertain_effect). */
  idempotent: boolean;
  /** Who approves a call; null when the tool is not granted, so every call is denied. */
  approval: Approval | null;
  /** The one-line reading of the above, as the text output prints it. */
  summary: string;
}

export interface PinnedToolReport {
  name: string;
  description: string;
  digest: string;
  annotations: z.infer<typeof AnnotationsSchema>;
  /** The grant that decides a call, as written (`mcp:<server>/<tool>` or `mcp:<server>/*`); null when none covers the tool. */
  grant: string | null;
  policy: ToolPolicy;
}

export interface McpServerReport {
  name: string;
  transport: string;
  url: string | null;
  command: string | null;
  args: string[];
  credential: string | null;
  trusted: boolean;
  timeoutMs: number | null;
  maxResultBytes: number | null;
  tools: PinnedToolReport[];
}

/**
 * The grant deciding a call of `<server>/<tool>`, as policy picks it: the one naming the tool,
 * else the one naming its server's `*`. A grant without the verb `call` grants no call.
 */
function decidingGrant(grants: readonly Grant[], resource: string): { grant: Grant; named: string } | null {
  const split = splitMcpResource(resource);
  if (!split) return null;
  const calls = grants.filter((grant) => grant.tool === MCP_TOOL && grant.verbs.includes('call'));
  for (const named of [resource, `${split.server}/*`]) {
    const grant = calls.find((candidate) => candidate.resources?.includes(named));
    if (grant) return { grant, named };
  }
  return null;
}

const APPROVAL_TEXT: Record<Approval, string> = {
  never: 'no approval',
  first_use: 'approved by a person on first use',
  always: 'a person approves every call',
};

/**
 * Annotations are the server's claims: read-only and idempotent loosen what is assumed only for a
 * trusted server, while destructive makes every call wait for a person whatever the trust.
 */
export function toolPolicy(server: Pick<Server, 'trusted'>, annotations: PinnedToolReport['annotations'], grant: Grant | null): ToolPolicy {
  const readOnly = server.trusted && annotations.readOnlyHint === true;
  const mutating = !readOnly;
  const idempotent = server.trusted && (annotations.readOnlyHint === true || annotations.idempotentHint === true);
  if (!grant) return { callable: false, mutating, idempotent, approval: null, summary: 'denied: no grant covers it' };
  const destructive = annotations.destructiveHint === true;
  const approval: Approval = destructive ? 'always' : grant.approval;
  const effects = `${mutating ? 'mutating' : 'read-only'}, ${idempotent ? 'idempotent' : 'not idempotent'}${server.trusted ? '' : ' (untrusted server)'}`;
  return { callable: true, mutating, idempotent, approval, summary: `${effects}; ${APPROVAL_TEXT[approval]}${destructive ? ' (destructive)' : ''}` };
}

/** Each server the version declares, with its pinned tools, the grant covering each and what policy will assume. */
export function mcpServerReports(definition: StoredDefinition): McpServerReport[] {
  return definition.mcp.map((server) => ({
    name: server.name,
    transport: server.transport,
    url: server.url ?? null,
    command: server.command ?? null,
    args: server.args,
    credential: server.credential ?? null,
    trusted: server.trusted,
    timeoutMs: server.timeoutMs ?? null,
    maxResultBytes: server.maxResultBytes ?? null,
    tools: server.tools.map((tool) => {
      const decided = decidingGrant(definition.tools, `${server.name}/${tool.name}`);
      return {
        name: tool.name,
        description: tool.description,
        digest: tool.digest,
        annotations: tool.annotations,
        grant: decided ? `mcp:${decided.named}` : null,
        policy: toolPolicy(server, tool.annotations, decided?.grant ?? null),
      };
    }),
  }));
}

/** `read-only, idempotent`, or `no hints`: the three annotations policy reads. */
export function annotationText(annotations: PinnedToolReport['annotations']): string {
  const hints = [annotations.readOnlyHint && 'read-only', annotations.destructiveHint && 'destructive', annotations.idempotentHint && 'idempotent'].filter((hint): hint is string => typeof hint === 'string');
  return hints.length ? hints.join(', ') : 'no hints';
}
