import { parseMcpToolId } from '../sandbox/mcp.v1';
import { z } from 'zod';
import type { JsonObject } from '../json';
import { ComputerNameSchema } from '../sandbox/computer.v1';
import { definitionErrorMap } from './issues';
import { KNOWN_TOOLS, MCP_TOOL, TOOL_NAMES, isKnownTool, verbsDefaultToAll, type ToolName } from './known-tools';
import { mcpGrantIssues, mcpServersSchema, type DefinitionForm, type McpServer } from './mcp-servers';
import { MAX_RESOURCE_LENGTH, normaliseResource } from './resources';
import {
  cronProblem,
  timezoneProblem,
  triggerKey,
  type AlertState,
  type AlertTrigger,
  type CronTrigger,
  type ManualTrigger,
  type QueueTrigger,
  type TriggerSpec,
  type WebhookTrigger,
} from './triggers';

export const WORKER_API_VERSION = 'packetagent/v1';
export const SUPPORTED_WORKER_API_VERSIONS = [WORKER_API_VERSION] as const;

export const MAX_INSTRUCTIONS_CHARS = 32768;
export const MAX_TOOLS = 64;
export const MAX_TRIGGERS = 32;
export const MAX_BUDGET_USD = 100000;

export type Approval = 'never' | 'first_use' | 'always';
/** From weakest to strictest. */
export const APPROVAL_STRICTNESS: readonly Approval[] = ['never', 'first_use', 'always'];

export type JsonSchemaObject = JsonObject;

export type ModelSpec =
  | { preset: 'default' | 'fast' | 'local' }
  | { provider: 'anthropic' | 'openai' | 'gemini' | 'openrouter' | 'minimax' | 'local' | 'scripted'; model: string; maxOutputTokens?: number };

/** A grant as declared by a version (defaults applied, resources in normal form). */
export interface ToolGrant {
  tool: ToolName;
  verbs: string[];
  /** Absent only for tools whose resources are optional: any resource of the tool's kind. */
  resources?: string[];
  approval: Approval;
  credentials: string[];
  /**
   * run_command only: registered computers its calls may run on, besides the local sandbox
   * (always allowed). Absent means the local sandbox only; never written as an empty list.
   */
  computers?: string[];
}

export interface ActionBudget {
  perRun?: number;
  perDay?: number;
}

export interface Budgets {
  perRunUsd?: number;
  perDeploymentHourlyUsd?: number;
  perDeploymentDailyUsd?: number;
  perDeployment30DayUsd?: number;
  perWorkspaceDailyUsd?: number;
  actions?: Partial<Record<ToolName, ActionBudget>>;
}

export interface Bounds {
  maxWallSeconds: number;
  maxIterations: number;
  maxToolCalls: number;
  maxConcurrentRuns: number;
}

export type ExitSpec = { finish: { criteria: string[] } } | { outputSchema: JsonSchemaObject };

export type NotificationEvent = 'attention' | 'succeeded' | 'failed' | 'any_terminal';

export interface NotificationRoute {
  on: NotificationEvent[];
  channel: 'webhook' | 'slack' | 'email';
  credential?: string;
  to?: string;
}

export interface WorkerDefinition {
  apiVersion: typeof WORKER_API_VERSION;
  kind: 'Worker';
  name: string;
  description?: string;
  model: ModelSpec;
  instructions: string;
  input?: { schema: JsonSchemaObject };
  output?: { schema: JsonSchemaObject };
  tools: ToolGrant[];
  budgets: Budgets;
  bounds: Bounds;
  exit: ExitSpec;
  triggers: TriggerSpec[];
  notifications: NotificationRoute[];
  /** MCP servers the tools of `mcp` grants come from; absent when none (so older digests hold). */
  mcp?: McpServer[];
}

export type { TriggerSpec } from './triggers';

// ---------------------------------------------------------------------------------------------
// Building blocks

/** A strict object whose unknown-key message lists the keys it does allow. */
export function strict<Shape extends z.ZodRawShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown key (allowed: ${allowed})` : undefined),
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a nested variant chosen in a transform; its issues are worded with the same map as
 * the rest of a definition, since a nested parse does not inherit the caller's map.
 */
function parseWith<T>(schema: z.ZodType<T>, value: unknown, ctx: z.core.$RefinementCtx): T {
  const result = schema.safeParse(value, { error: definitionErrorMap });
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
}

/**
 * One of several shapes told apart by which key is present (`{preset}` or `{provider}`,
 * `{cron}` or `{webhook}`...): a precise message when none or several are present, and the
 * chosen shape's own issues otherwise, instead of a union's "no variant matched".
 */
function oneOf<T>(rule: string, variants: ReadonlyArray<readonly [string, z.ZodType<T>]>): z.ZodType<T> {
  return z.unknown().transform((value, ctx): T => {
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: `required (${rule})` });
      return z.NEVER;
    }
    if (!isPlainObject(value)) {
      ctx.addIssue({ code: 'custom', message: `expected an object with ${rule}` });
      return z.NEVER;
    }
    const present = variants.filter(([key]) => Object.hasOwn(value, key));
    if (present.length !== 1) {
      const found = present.map(([key]) => `"${key}"`).join(' and ');
      ctx.addIssue({ code: 'custom', message: present.length === 0 ? `needs ${rule}` : `has ${found}; needs ${rule}` });
      return z.NEVER;
    }
    return parseWith(present[0]![1], value, ctx);
  }) as unknown as z.ZodType<T>;
}

const JsonSchemaObjectSchema: z.ZodType<JsonSchemaObject> = z
  .unknown()
  .superRefine((value, ctx) => {
    const type = isPlainObject(value) ? value['type'] : undefined;
    const typeOk = typeof type === 'string' || (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === 'string'));
    if (!typeOk) ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema object with a "type" (a string or a list of strings)' });
  })
  .pipe(z.record(z.string(), z.json())) as unknown as z.ZodType<JsonSchemaObject>;

const SchemaHolder = strict({ schema: JsonSchemaObjectSchema });

export const CREDENTIAL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
const CredentialName = z
  .string()
  .regex(CREDENTIAL_NAME_PATTERN, { error: 'a credential name starts with a lower-case letter and has only a-z, 0-9 and "_" (at most 63 characters)' });

export const WORKER_NAME_PATTERN = /^[a-z][a-z0-9-]{1,62}$/;
export const TRIGGER_NAME_PATTERN = /^[a-z][a-z0-9-]{0,40}$/;
const TriggerName = z
  .string()
  .regex(TRIGGER_NAME_PATTERN, { error: 'a trigger name starts with a lower-case letter and has only a-z, 0-9 and "-" (at most 41 characters)' });

export const ApprovalSchema = z.enum(['never', 'first_use', 'always']);

/** Most computers one run_command grant may name. */
export const MAX_GRANT_COMPUTERS = 32;

function duplicates<T>(items: readonly T[], key: (item: T) => string = String): Array<{ index: number; first: number; value: string }> {
  const seen = new Map<string, number>();
  const found: Array<{ index: number; first: number; value: string }> = [];
  items.forEach((item, index) => {
    const value = key(item);
    const first = seen.get(value);
    if (first === undefined) seen.set(value, index);
    else found.push({ index, first, value });
  });
  return found;
}

// ---------------------------------------------------------------------------------------------
// Model

const PresetModel = strict({ preset: z.enum(['default', 'fast', 'local']) });
const ProviderModel = strict({
  provider: z.enum(['anthropic', 'openai', 'gemini', 'openrouter', 'minimax', 'local', 'scripted']),
  model: z.string().min(1).max(200),
  maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
});
const ModelSchema = oneOf<ModelSpec>('exactly one of "preset" or "provider" (with "model")', [
  ['preset', PresetModel as z.ZodType<ModelSpec>],
  ['provider', ProviderModel as z.ZodType<ModelSpec>],
]);

// ---------------------------------------------------------------------------------------------
// Tool grants, shared by the definition and deployment overrides

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
  approval: ApprovalSchema.optional(),
  credentials: z.array(CredentialName).max(32).optional(),
  computers: z.array(z.string()).max(MAX_GRANT_COMPUTERS).optional(),
});

/** A grant as written in deployment overrides: every field but `tool` optional, nothing defaulted. */
export interface ToolGrantOverride {
  tool: ToolName;
  verbs?: string[];
  resources?: string[];
  approval?: Approval;
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
  if (raw.computers !== undefined && tool !== COMPUTER_TOOL) {
    issue(['computers'], `${tool} takes no computers: only ${COMPUTER_TOOL} runs on registered computers`);
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

const ToolsSchema = z.array(ToolGrantSchema).max(MAX_TOOLS).superRefine(uniqueTools);
export const ToolOverridesSchema = z.array(ToolGrantOverrideSchema).max(MAX_TOOLS).superRefine(uniqueTools);

// ---------------------------------------------------------------------------------------------
// Budgets and bounds

const Usd = z
  .number()
  .gt(0, { error: 'must be greater than 0' })
  .max(MAX_BUDGET_USD, { error: `must be at most ${MAX_BUDGET_USD}` });
const ActionCount = z
  .number()
  .int()
  .gt(0, { error: 'must be greater than 0' })
  .max(1_000_000, { error: 'must be at most 1000000' });

const ActionBudgetSchema = strict({ perRun: ActionCount.optional(), perDay: ActionCount.optional() }).superRefine((value, ctx) => {
  if (value.perRun === undefined && value.perDay === undefined) ctx.addIssue({ code: 'custom', message: 'set perRun, perDay or both' });
});

export const BudgetsSchema: z.ZodType<Budgets> = strict({
  perRunUsd: Usd.optional(),
  perDeploymentHourlyUsd: Usd.optional(),
  perDeploymentDailyUsd: Usd.optional(),
  perDeployment30DayUsd: Usd.optional(),
  perWorkspaceDailyUsd: Usd.optional(),
  actions: z
    .record(z.string(), ActionBudgetSchema)
    .superRefine((actions, ctx) => {
      for (const tool of Object.keys(actions)) {
        // An MCP tool's calls are counted apart: `mcp:<server>/<tool>` (count:mcp:<server>/<tool>).
        if (tool === 'mcp') ctx.addIssue({ code: 'custom', path: [tool], message: 'MCP calls are counted per tool: name it as mcp:<server>/<tool>' });
        else if (!isKnownTool(tool) && !parseMcpToolId(tool)) ctx.addIssue({ code: 'custom', path: [tool], message: `unknown tool "${tool}" (known: ${TOOL_NAMES.join(', ')})` });
      }
    })
    .optional(),
}) as unknown as z.ZodType<Budgets>;

export const BOUND_LIMITS = {
  maxWallSeconds: { min: 1, max: 86400, default: 600 },
  maxIterations: { min: 1, max: 1000, default: 20 },
  maxToolCalls: { min: 1, max: 10000, default: 40 },
  maxConcurrentRuns: { min: 1, max: 1000, default: 10 },
} as const satisfies Record<keyof Bounds, { min: number; max: number; default: number }>;

const bound = (key: keyof Bounds) => z.number().int().min(BOUND_LIMITS[key].min).max(BOUND_LIMITS[key].max);

export const BoundsSchema: z.ZodType<Bounds> = strict({
  maxWallSeconds: bound('maxWallSeconds').default(BOUND_LIMITS.maxWallSeconds.default),
  maxIterations: bound('maxIterations').default(BOUND_LIMITS.maxIterations.default),
  maxToolCalls: bound('maxToolCalls').default(BOUND_LIMITS.maxToolCalls.default),
  maxConcurrentRuns: bound('maxConcurrentRuns').default(BOUND_LIMITS.maxConcurrentRuns.default),
}) as unknown as z.ZodType<Bounds>;

export const BoundsOverrideSchema: z.ZodType<Partial<Bounds>> = strict({
  maxWallSeconds: bound('maxWallSeconds').optional(),
  maxIterations: bound('maxIterations').optional(),
  maxToolCalls: bound('maxToolCalls').optional(),
  maxConcurrentRuns: bound('maxConcurrentRuns').optional(),
}) as unknown as z.ZodType<Partial<Bounds>>;

// ---------------------------------------------------------------------------------------------
// Exit condition

const FinishExit = strict({
  finish: strict({ criteria: z.array(z.string().min(1).max(500)).min(1).max(50) }),
});
const OutputSchemaExit = strict({ outputSchema: JsonSchemaObjectSchema });
const ExitSchema = oneOf<ExitSpec>('exactly one of "finish" or "outputSchema"', [
  ['finish', FinishExit as z.ZodType<ExitSpec>],
  ['outputSchema', OutputSchemaExit as z.ZodType<ExitSpec>],
]);

// ---------------------------------------------------------------------------------------------
// Triggers

const CronTriggerSchema = strict({
  cron: z.string().min(1).max(200),
  timezone: z.string().max(64).default('UTC'),
  missed: z.enum(['skip', 'fire_once']).default('skip'),
  name: TriggerName.optional(),
}).superRefine((trigger, ctx) => {
  const zoneProblem = timezoneProblem(trigger.timezone);
  if (zoneProblem) ctx.addIssue({ code: 'custom', path: ['timezone'], message: zoneProblem });
  const problem = cronProblem(trigger.cron, zoneProblem ? 'UTC' : trigger.timezone);
  if (problem) ctx.addIssue({ code: 'custom', path: ['cron'], message: problem });
});

const WebhookTriggerSchema = strict({ webhook: strict({}), name: TriggerName.optional() });

export const QUEUE_SUBJECT_PATTERN = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
const QueueTriggerSchema = strict({
  queue: strict({
    subject: z
      .string()
      .max(200)
      .regex(QUEUE_SUBJECT_PATTERN, { error: 'a subject is dot-separated tokens of a-z, 0-9, "_" and "-", without wildcards' }),
  }),
  name: TriggerName.optional(),
});

const ALERT_STATES = ['firing', 'resolved'] as const satisfies readonly AlertState[];
const AlertTriggerSchema = strict({
  alert: strict({
    names: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
    labels: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'a label name has only A-Z, a-z, 0-9 and "_" and does not start with a digit' }), z.string().max(1024))
      .optional(),
    on: z.array(z.enum(ALERT_STATES)).min(1).default(['firing']),
  }).superRefine((alert, ctx) => {
    const hasLabels = alert.labels !== undefined && Object.keys(alert.labels).length > 0;
    if (alert.names === undefined && !hasLabels) ctx.addIssue({ code: 'custom', message: 'an alert trigger needs names or labels' });
    for (const dup of duplicates(alert.on)) ctx.addIssue({ code: 'custom', path: ['on', dup.index], message: `duplicate state "${dup.value}"` });
  }),
  name: TriggerName.optional(),
});

const ManualTriggerSchema = strict({ manual: strict({}), name: TriggerName.optional() });

const TriggerSchema = oneOf<TriggerSpec>('exactly one of "cron", "webhook", "queue", "alert" or "manual"', [
  ['cron', CronTriggerSchema as z.ZodType<CronTrigger>],
  ['webhook', WebhookTriggerSchema as z.ZodType<WebhookTrigger>],
  ['queue', QueueTriggerSchema as z.ZodType<QueueTrigger>],
  ['alert', AlertTriggerSchema as unknown as z.ZodType<AlertTrigger>],
  ['manual', ManualTriggerSchema as z.ZodType<ManualTrigger>],
]);

const TriggersSchema = z
  .array(TriggerSchema)
  .max(MAX_TRIGGERS)
  .superRefine((triggers, ctx) => {
    for (const dup of duplicates(triggers.map((trigger, index) => triggerKey(trigger, index)))) {
      const named = (triggers[dup.index] as { name?: string }).name !== undefined;
      ctx.addIssue({ code: 'custom', path: named ? [dup.index, 'name'] : [dup.index], message: `duplicate trigger key "${dup.value}" (also triggers[${dup.first}])` });
    }
  });

// ---------------------------------------------------------------------------------------------
// Notifications

const NotificationSchema = strict({
  on: z.array(z.enum(['attention', 'succeeded', 'failed', 'any_terminal'])).min(1),
  channel: z.enum(['webhook', 'slack', 'email']),
  credential: CredentialName.optional(),
  to: z.string().min(1).max(2048).optional(),
}).superRefine((route, ctx) => {
  for (const dup of duplicates(route.on)) ctx.addIssue({ code: 'custom', path: ['on', dup.index], message: `duplicate event "${dup.value}"` });
  const to = route.to;
  switch (route.channel) {
    case 'webhook': {
      if (route.credential === undefined) ctx.addIssue({ code: 'custom', path: ['credential'], message: 'required for a webhook route: the credential holds its signing secret' });
      if (to !== undefined) {
        const checked = normaliseResource('http_fetch', to);
        if (!checked.ok || to.includes('*')) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be an http or https URL without wildcards' });
      }
      break;
    }
    case 'slack':
      if (route.credential === undefined) ctx.addIssue({ code: 'custom', path: ['credential'], message: 'required for a Slack route: the credential holds its token' });
      if (to !== undefined && !normaliseResource('slack_post', to).ok) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be a Slack channel "#name"' });
      break;
    case 'email': {
      const checked = to === undefined ? undefined : normaliseResource('email_send', to);
      if (to === undefined || !checked?.ok || to.startsWith('*')) ctx.addIssue({ code: 'custom', path: ['to'], message: 'an email route needs "to": one email address' });
      break;
    }
  }
});

// ---------------------------------------------------------------------------------------------
// The definition

const ApiVersionSchema = z.string().refine((value) => value === WORKER_API_VERSION, {
  error: (issue) => `unsupported apiVersion ${JSON.stringify(issue.input)} (supported: ${SUPPORTED_WORKER_API_VERSIONS.join(', ')})`,
});

function definitionSchema(form: DefinitionForm): z.ZodType<WorkerDefinition> {
  return strict({
    apiVersion: ApiVersionSchema,
    kind: z.literal('Worker', { error: (issue) => (issue.input === undefined ? 'required' : 'must be "Worker"') }),
    name: z.string().regex(WORKER_NAME_PATTERN, { error: 'a worker name starts with a lower-case letter and has only a-z, 0-9 and "-" (2 to 63 characters)' }),
    description: z.string().max(2000, { error: 'description exceeds 2000 characters' }).optional(),
    model: ModelSchema,
    instructions: z
      .string()
      .min(1, { error: 'instructions must not be empty' })
      .max(MAX_INSTRUCTIONS_CHARS, { error: `instructions exceed ${MAX_INSTRUCTIONS_CHARS} characters` }),
    input: SchemaHolder.optional(),
    output: SchemaHolder.optional(),
    tools: ToolsSchema.default([]),
    budgets: BudgetsSchema.default({}),
    bounds: BoundsSchema.prefault({}),
    exit: ExitSchema,
    triggers: TriggersSchema.default([]),
    notifications: z.array(NotificationSchema).max(16).default([]),
    mcp: mcpServersSchema(form).optional(),
  })
    .superRefine((def, ctx) => {
      for (const issue of mcpGrantIssues(def.tools, def.mcp ?? [], form)) ctx.addIssue({ code: 'custom', path: ['tools', ...issue.path], message: issue.message });
    })
    .transform((def) => {
      // Left out when empty, so every definition written before MCP keeps its digest.
      if (def.mcp?.length === 0 || (Object.hasOwn(def, 'mcp') && def.mcp === undefined)) delete def.mcp;
      return def;
    }) as unknown as z.ZodType<WorkerDefinition>;
}

/**
 * The `packetagent/v1` Worker format as written. Its output has every default applied and every
 * resource in normal form. Parse sources with parseWorkerDefinition (or validateWorkerDefinition):
 * they also refuse non-JSON values and prototype keys, and word every issue with definitionErrorMap.
 * A source may not write an MCP server's `tools`: the version pins them.
 */
export const WorkerDefinitionSchema: z.ZodType<WorkerDefinition> = definitionSchema('source');

/** A version as stored: every MCP server carries the tools pinned when the version was created. */
export const StoredWorkerDefinitionSchema: z.ZodType<WorkerDefinition> = definitionSchema('stored');
