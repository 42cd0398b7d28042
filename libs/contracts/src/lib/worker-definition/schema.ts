import { z } from 'zod';
import type { JsonObject } from '../json';
import { parseMcpToolId } from '../sandbox/mcp.v1';
import { TOOL_NAMES, isKnownTool, type ToolName } from './known-tools';
import { mcpGrantIssues, mcpServersSchema, type DefinitionForm, type McpServer } from './mcp-servers';
import { normaliseResource } from './resources';
import { CredentialName, duplicates, isPlainObject, oneOf, strict } from './schema-kit';
import { ToolsSchema } from './tool-grants';
import { escalationIssues, type ApprovalSpec } from './approval-rules';
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
export const MAX_TRIGGERS = 32;
export const MAX_BUDGET_USD = 100000;

export { APPROVAL_STRICTNESS, type Approval, type ApprovalRules, type ApprovalSpec } from './approval-rules';

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
  /** A plain mode, or rules around one (deadline, reminder, escalation, quorum, approvers). */
  approval: ApprovalSpec;
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
  /**
   * What a run does when its cost reaches `perRunUsd`: `end` (the default) ends it
   * `budget_exhausted`; `request` asks a person for more (a `budget_request` attention) and waits.
   * Deployment and workspace limits always end the run.
   */
  onExhausted?: BudgetOnExhausted;
  /** How much more a budget request asks for; the run's `perRunUsd` when not set. */
  requestStepUsd?: number;
}

export const BUDGET_ON_EXHAUSTED = ['end', 'request'] as const;
export type BudgetOnExhausted = (typeof BUDGET_ON_EXHAUSTED)[number];

export interface Bounds {
  maxWallSeconds: number;
  maxIterations: number;
  maxToolCalls: number;
  maxConcurrentRuns: number;
}

export type ExitSpec = { finish: { criteria: string[] } } | { outputSchema: JsonSchemaObject };

export const NOTIFICATION_EVENTS = [
  'attention',
  'reminder',
  'escalation',
  'progress',
  'succeeded',
  'failed',
  'abandoned',
  'any_terminal',
  'budget_warning',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
export const NOTIFICATION_CHANNELS = ['webhook', 'slack', 'email', 'packetchat', 'packetphone'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];
/** Which remote controls a route's recipient is offered: the workspace role they act with. */
export const NOTIFICATION_ROLES = ['viewer', 'member', 'admin'] as const;
export type NotificationRole = (typeof NOTIFICATION_ROLES)[number];

export interface NotificationRoute {
  /** How approval escalations name the route (`escalate.to`); absent routes are known by position. */
  name?: string;
  on: NotificationEvent[];
  channel: NotificationChannel;
  credential?: string;
  to?: string;
  /** The role the recipient acts with through the route's controls; `member` by default. */
  role?: NotificationRole;
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
export { ApprovalSchema, CREDENTIAL_NAME_PATTERN, strict } from './schema-kit';
export { MAX_GRANT_COMPUTERS, MAX_TOOLS, ToolGrantOverrideSchema, ToolOverridesSchema, type ToolGrantOverride } from './tool-grants';

// ---------------------------------------------------------------------------------------------
// Building blocks of this file (the shared ones are in schema-kit.ts)

const JsonSchemaObjectSchema: z.ZodType<JsonSchemaObject> = z
  .unknown()
  .superRefine((value, ctx) => {
    const type = isPlainObject(value) ? value['type'] : undefined;
    const typeOk = typeof type === 'string' || (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === 'string'));
    if (!typeOk) ctx.addIssue({ code: 'custom', message: 'must be a JSON Schema object with a "type" (a string or a list of strings)' });
  })
  .pipe(z.record(z.string(), z.json())) as unknown as z.ZodType<JsonSchemaObject>;

const SchemaHolder = strict({ schema: JsonSchemaObjectSchema });

export const WORKER_NAME_PATTERN = /^[a-z][a-z0-9-]{1,62}$/;
export const TRIGGER_NAME_PATTERN = /^[a-z][a-z0-9-]{0,40}$/;
const TriggerName = z
  .string()
  .regex(TRIGGER_NAME_PATTERN, { error: 'a trigger name starts with a lower-case letter and has only a-z, 0-9 and "-" (at most 41 characters)' });

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
  // No default: a definition that does not say stays as it was written, and so does its digest.
  onExhausted: z.enum(BUDGET_ON_EXHAUSTED).optional(),
  requestStepUsd: Usd.optional(),
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

export const ROUTE_NAME_PATTERN = /^[a-z][a-z0-9-]{0,40}$/;
const NotificationSchema = strict({
  name: z.string().regex(ROUTE_NAME_PATTERN, { error: 'a route name starts with a lower-case letter and has only a-z, 0-9 and "-" (at most 41 characters)' }).optional(),
  on: z.array(z.enum(NOTIFICATION_EVENTS)).min(1),
  channel: z.enum(NOTIFICATION_CHANNELS),
  credential: CredentialName.optional(),
  to: z.string().min(1).max(2048).optional(),
  role: z.enum(NOTIFICATION_ROLES).optional(),
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
    case 'packetchat':
    case 'packetphone':
      if (route.credential === undefined) ctx.addIssue({ code: 'custom', path: ['credential'], message: `required for a ${route.channel} route: the credential holds its endpoint and signing secret` });
      if (to === undefined || !/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/.test(to)) {
        ctx.addIssue({ code: 'custom', path: ['to'], message: `a ${route.channel} route needs "to": the ${route.channel === 'packetchat' ? 'thread or channel' : 'recipient'} id (letters, digits and . _ : @ -)` });
      }
      break;
    case 'email': {
      const checked = to === undefined ? undefined : normaliseResource('email_send', to);
      if (to === undefined || !checked?.ok || to.startsWith('*')) ctx.addIssue({ code: 'custom', path: ['to'], message: 'an email route needs "to": one email address' });
      break;
    }
  }
});

const NotificationsSchema = z
  .array(NotificationSchema)
  .max(16)
  .superRefine((routes, ctx) => {
    const named = routes.map((route, index) => route.name ?? `#${index}`);
    for (const dup of duplicates(named)) ctx.addIssue({ code: 'custom', path: [dup.index, 'name'], message: `duplicate route name "${dup.value}" (also notifications[${dup.first}])` });
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
    notifications: NotificationsSchema.default([]),
    mcp: mcpServersSchema(form).optional(),
  })
    .superRefine((def, ctx) => {
      for (const issue of mcpGrantIssues(def.tools, def.mcp ?? [], form)) ctx.addIssue({ code: 'custom', path: ['tools', ...issue.path], message: issue.message });
      for (const issue of escalationIssues(def.tools, def.notifications)) ctx.addIssue({ code: 'custom', path: ['tools', ...issue.path], message: issue.message });
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
