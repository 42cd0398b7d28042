import { z } from 'zod';
import type { ValidationIssue } from '../errors';
import { BroadeningOverrideError, InvalidOverridesError } from './errors';
import { definitionErrorMap, toValidationIssues } from './issues';
import { MCP_TOOL } from './known-tools';
import { resourceCovers } from './resources';
import { narrowApproval } from './approval-rules';
import {
  BoundsOverrideSchema,
  BudgetsSchema,
  MAX_TRIGGERS,
  ToolOverridesSchema,
  strict,
  type ActionBudget,
  type Bounds,
  type Budgets,
  type ToolGrant,
  type ToolGrantOverride,
  type WorkerDefinition,
} from './schema';
import { triggerKey } from './triggers';

/** What a deployment may change about its pinned version: only ever narrower. */
export interface DeploymentOverrides {
  tools?: ToolGrantOverride[];
  budgets?: Budgets;
  bounds?: Partial<Bounds>;
  triggers?: { disable?: string[] };
}

export const DeploymentOverridesSchema: z.ZodType<DeploymentOverrides> = strict({
  tools: ToolOverridesSchema.optional(),
  budgets: BudgetsSchema.optional(),
  bounds: BoundsOverrideSchema.optional(),
  triggers: strict({
    disable: z
      .array(z.string().min(1).max(64))
      .max(MAX_TRIGGERS)
      .superRefine((keys, ctx) => {
        keys.forEach((key, index) => {
          if (keys.indexOf(key) !== index) ctx.addIssue({ code: 'custom', path: [index], message: `duplicate trigger key "${key}"` });
        });
      })
      .optional(),
  }).optional(),
}) as unknown as z.ZodType<DeploymentOverrides>;

const USD_BUDGETS = ['perRunUsd', 'perDeploymentHourlyUsd', 'perDeploymentDailyUsd', 'perDeployment30DayUsd', 'perWorkspaceDailyUsd'] as const;
const ACTION_LIMITS = ['perRun', 'perDay'] as const;
const BOUND_KEYS = ['maxWallSeconds', 'maxIterations', 'maxToolCalls', 'maxConcurrentRuns'] as const;

/**
 * The effective definition of a deployment: the version with its overrides applied. Throws
 * InvalidOverridesError for malformed overrides (or a trigger key the version lacks) and
 * BroadeningOverrideError, naming each offending path, for anything the version does not grant.
 *
 * A tool named in the overrides has its grant replaced by the narrower one; other tools keep the
 * version's grant. A budget the version lacks may be added. When triggers are disabled, the
 * remaining unnamed triggers are named after their version key, so keys never shift.
 */
export function narrowDefinition(def: WorkerDefinition, overrides: unknown): WorkerDefinition {
  const parsed = DeploymentOverridesSchema.safeParse(overrides ?? {}, { error: definitionErrorMap });
  if (!parsed.success) throw new InvalidOverridesError('invalid deployment overrides', toValidationIssues(parsed.error.issues, ['overrides']));
  const narrowing = parsed.data;
  const broadening: ValidationIssue[] = [];

  const tools = def.tools.map((grant) => {
    const index = narrowing.tools?.findIndex((candidate) => grantKey(candidate) === grantKey(grant)) ?? -1;
    return index < 0 ? grant : narrowGrant(grant, narrowing.tools![index]!, `overrides.tools[${index}]`, broadening);
  });
  narrowing.tools?.forEach((candidate, index) => {
    if (def.tools.some((grant) => grantKey(grant) === grantKey(candidate))) return;
    broadening.push({ path: `overrides.tools[${index}].tool`, message: notGranted(def, candidate) });
  });

  const budgets = narrowBudgets(def.budgets, narrowing.budgets ?? {}, broadening);

  const bounds: Bounds = { ...def.bounds };
  for (const key of BOUND_KEYS) {
    const value = narrowing.bounds?.[key];
    if (value === undefined) continue;
    if (value > def.bounds[key]) broadening.push({ path: `overrides.bounds.${key}`, message: `${value} exceeds the version's ${def.bounds[key]}` });
    else bounds[key] = value;
  }

  const keys = def.triggers.map((trigger, index) => triggerKey(trigger, index));
  const disable = narrowing.triggers?.disable ?? [];
  const unknownKeys = disable.flatMap((key, index) =>
    keys.includes(key) ? [] : [{ path: `overrides.triggers.disable[${index}]`, message: `no trigger "${key}" in the version (keys: ${keys.join(', ') || 'none'})` }],
  );
  if (unknownKeys.length > 0) throw new InvalidOverridesError('invalid deployment overrides', unknownKeys);
  if (broadening.length > 0) throw new BroadeningOverrideError('deployment overrides broaden the version', broadening);

  const triggers =
    disable.length === 0
      ? def.triggers
      : def.triggers.flatMap((trigger, index) => (disable.includes(keys[index]!) ? [] : [{ ...trigger, name: keys[index]! }]));

  return { ...def, tools, budgets, bounds, triggers };
}

/**
 * Which version grant an override narrows: the one for its tool, or for `mcp`, which a version
 * may grant several times, the one naming exactly the same resources.
 */
function grantKey(grant: { tool: string; resources?: string[] | undefined }): string {
  return grant.tool === MCP_TOOL ? `${MCP_TOOL} ${[...(grant.resources ?? [])].sort().join(' ')}` : grant.tool;
}

function notGranted(def: WorkerDefinition, candidate: ToolGrantOverride): string {
  if (candidate.tool !== MCP_TOOL) return `"${candidate.tool}" is not granted by the version`;
  const named = (candidate.resources ?? []).map((resource) => `mcp:${resource}`).join(', ');
  const granted = def.tools.filter((grant) => grant.tool === MCP_TOOL).map((grant) => (grant.resources ?? []).map((resource) => `mcp:${resource}`).join(', '));
  return `no mcp grant of the version names exactly ${named}: an override narrows the grant with the same resources (the version's: ${granted.map((list) => `[${list}]`).join(', ') || 'none'})`;
}

function narrowGrant(grant: ToolGrant, narrowing: ToolGrantOverride, base: string, broadening: ValidationIssue[]): ToolGrant {
  narrowing.verbs?.forEach((verb, index) => {
    if (!grant.verbs.includes(verb)) broadening.push({ path: `${base}.verbs[${index}]`, message: `"${verb}" is not granted by the version` });
  });
  narrowing.resources?.forEach((resource, index) => {
    const covered = grant.resources === undefined || grant.resources.some((granted) => resourceCovers(grant.tool, granted, resource));
    if (!covered) broadening.push({ path: `${base}.resources[${index}]`, message: `"${resource}" is not covered by the version's resources` });
  });
  const approval = narrowing.approval === undefined ? { approval: grant.approval, problems: [] } : narrowApproval(grant.approval, narrowing.approval);
  for (const problem of approval.problems) broadening.push({ path: `${base}.approval${problem.path}`, message: problem.message });
  narrowing.credentials?.forEach((credential, index) => {
    if (!grant.credentials.includes(credential)) broadening.push({ path: `${base}.credentials[${index}]`, message: `"${credential}" is not granted by the version` });
  });
  narrowing.computers?.forEach((computer, index) => {
    if (!grant.computers?.includes(computer)) broadening.push({ path: `${base}.computers[${index}]`, message: `"${computer}" is not granted by the version` });
  });
  const narrowed: ToolGrant = {
    tool: grant.tool,
    verbs: narrowing.verbs ?? grant.verbs,
    approval: approval.approval,
    credentials: narrowing.credentials ?? grant.credentials,
  };
  const resources = narrowing.resources ?? grant.resources;
  if (resources !== undefined) narrowed.resources = resources;
  // Narrowed to none is the local sandbox only, spelt as a grant that names no computer.
  const computers = narrowing.computers ?? grant.computers;
  if (computers?.length) narrowed.computers = computers;
  return narrowed;
}

function narrowBudgets(version: Budgets, narrowing: Budgets, broadening: ValidationIssue[]): Budgets {
  const budgets: Budgets = { ...version };
  for (const key of USD_BUDGETS) {
    const value = narrowing[key];
    if (value === undefined) continue;
    const limit = version[key];
    if (limit !== undefined && value > limit) broadening.push({ path: `overrides.budgets.${key}`, message: `${value} exceeds the version's ${limit}` });
    else budgets[key] = value;
  }
  if (narrowing.requestStepUsd !== undefined) {
    // Unset, a request asks for the run's limit again: that is the ceiling a deployment narrows.
    const step = version.requestStepUsd ?? version.perRunUsd;
    if (step !== undefined && narrowing.requestStepUsd > step) broadening.push({ path: 'overrides.budgets.requestStepUsd', message: `${narrowing.requestStepUsd} exceeds the version's ${step}` });
    else budgets.requestStepUsd = narrowing.requestStepUsd;
  }
  // Asking a person for more is broader than ending: a deployment may turn it off, never on.
  if (narrowing.onExhausted === 'request' && version.onExhausted !== 'request') {
    broadening.push({ path: 'overrides.budgets.onExhausted', message: "request is broader than the version's end" });
  } else if (narrowing.onExhausted !== undefined) {
    budgets.onExhausted = narrowing.onExhausted;
  }
  if (narrowing.actions) {
    const actions: Record<string, ActionBudget> = { ...version.actions };
    for (const [tool, limits] of Object.entries(narrowing.actions) as Array<[string, ActionBudget]>) {
      const versionLimits: ActionBudget = (version.actions as Record<string, ActionBudget> | undefined)?.[tool] ?? {};
      const merged: ActionBudget = { ...versionLimits };
      for (const key of ACTION_LIMITS) {
        const value = limits[key];
        if (value === undefined) continue;
        const limit = versionLimits[key];
        if (limit !== undefined && value > limit) broadening.push({ path: `overrides.budgets.actions.${tool}.${key}`, message: `${value} exceeds the version's ${limit}` });
        else merged[key] = value;
      }
      actions[tool] = merged;
    }
    budgets.actions = actions;
  }
  return budgets;
}
