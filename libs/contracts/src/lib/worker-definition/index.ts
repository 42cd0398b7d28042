export { workerDefinitionJsonSchema } from './json-schema';
export { KNOWN_TOOLS, MCP_TOOL, TOOL_NAMES, isKnownTool, type KnownTool, type ResourceKind, type ToolName } from './known-tools';
export { MAX_RESOURCE_LENGTH, normaliseResource, resourceCovers, splitMcpResource, type ResourceCheck } from './resources';
export { MAX_MCP_SERVERS, type DefinitionForm, type McpServer, type PinnedMcpServer } from './mcp-servers';
export {
  TRIGGER_SPEC_KINDS,
  triggerKey,
  triggerKind,
  type AlertState,
  type AlertTrigger,
  type CronTrigger,
  type ManualTrigger,
  type QueueTrigger,
  type TriggerSpecKind,
  type TriggerSpec,
  type WebhookTrigger,
} from './triggers';
export {
  WORKER_API_VERSION,
  APPROVAL_STRICTNESS,
  BOUND_LIMITS,
  CREDENTIAL_NAME_PATTERN,
  MAX_BUDGET_USD,
  MAX_GRANT_COMPUTERS,
  MAX_INSTRUCTIONS_CHARS,
  MAX_TOOLS,
  MAX_TRIGGERS,
  SUPPORTED_WORKER_API_VERSIONS,
  TRIGGER_NAME_PATTERN,
  WORKER_NAME_PATTERN,
  StoredWorkerDefinitionSchema,
  WorkerDefinitionSchema,
  type ActionBudget,
  type Approval,
  type Bounds,
  type Budgets,
  BUDGET_ON_EXHAUSTED,
  type BudgetOnExhausted,
  type ExitSpec,
  type JsonSchemaObject,
  type ModelSpec,
  NOTIFICATION_CHANNELS,
  NOTIFICATION_EVENTS,
  NOTIFICATION_ROLES,
  ROUTE_NAME_PATTERN,
  type NotificationChannel,
  type NotificationEvent,
  type NotificationRole,
  type NotificationRoute,
  type ToolGrant,
  type ToolGrantOverride,
  type WorkerDefinition,
} from './schema';
export {
  approvalMode,
  approvalRules,
  approverAllowed,
  ApprovalSpecSchema,
  durationSeconds,
  DURATION_PATTERN,
  MAX_DURATION_SECONDS,
  MAX_QUORUM,
  type ApprovalRules,
  type ApprovalSpec,
} from './approval-rules';
export { BroadeningOverrideError, DefinitionError, DefinitionTooLargeError, InvalidOverridesError } from './errors';
export { MAX_DEFINITION_BYTES, MAX_YAML_ALIASES, parseWorkerDefinition, validateStoredDefinition, validateWorkerDefinition, type DefinitionFormat } from './parse';
export { canonicalDefinition, credentialsOf } from './canonical';
export { DeploymentOverridesSchema, narrowDefinition, type DeploymentOverrides } from './overrides';
