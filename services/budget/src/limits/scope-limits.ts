import { z } from 'zod';
import { MICRO_USD_PER_USD, type BudgetScopeKind, type BudgetUnit, type BudgetWindow } from '@packetagent/contracts';

/** One limit a deployment's budgets declare for a kind of scope. */
export interface ScopeLimit {
  unit: BudgetUnit;
  window: BudgetWindow;
  /** Micro-dollars for `usd`, calls for `count:<tool>`. */
  limit: number;
}

export interface LimitsByKind {
  run: ScopeLimit[];
  deployment: ScopeLimit[];
  workspace: ScopeLimit[];
}

const usd = z.number().positive().finite().optional();
const count = z.number().int().positive().optional();

/** The `limits.budgets` of deployment events, read leniently: an unknown key is not ours to refuse. */
const BudgetsShape = z.object({
  perRunUsd: usd,
  perDeploymentHourlyUsd: usd,
  perDeploymentDailyUsd: usd,
  perDeployment30DayUsd: usd,
  perWorkspaceDailyUsd: usd,
  actions: z.record(z.string(), z.object({ perRun: count, perDay: count })).optional(),
});

/** Whole micro-dollars: the definition allows fractional dollars, the ledger only integers. */
export function usdToMicros(value: number): number {
  return Math.round(value * MICRO_USD_PER_USD);
}

const TOOL_UNIT = /^([a-z][a-z0-9_]{0,63}|mcp:[a-z][a-z0-9_-]{0,31}\/[A-Za-z0-9_.-]{1,128})$/;

/**
 * The scope limits a deployment's effective budgets declare: per run, per deployment (rolling
 * hour, day, 30 days) and per workspace (rolling day). Tools whose name can not be a unit are skipped.
 */
export function scopeLimits(budgets: unknown): LimitsByKind {
  const parsed = BudgetsShape.safeParse(budgets ?? {});
  const b = parsed.success ? parsed.data : {};
  const result: LimitsByKind = { run: [], deployment: [], workspace: [] };
  const add = (kind: BudgetScopeKind, unit: BudgetUnit, window: BudgetWindow, limit: number | undefined) => {
    if (limit !== undefined) result[kind].push({ unit, window, limit });
  };
  add('run', 'usd', 'run', b.perRunUsd === undefined ? undefined : usdToMicros(b.perRunUsd));
  add('deployment', 'usd', 'hour', b.perDeploymentHourlyUsd === undefined ? undefined : usdToMicros(b.perDeploymentHourlyUsd));
  add('deployment', 'usd', 'day', b.perDeploymentDailyUsd === undefined ? undefined : usdToMicros(b.perDeploymentDailyUsd));
  add('deployment', 'usd', '30d', b.perDeployment30DayUsd === undefined ? undefined : usdToMicros(b.perDeployment30DayUsd));
  add('workspace', 'usd', 'day', b.perWorkspaceDailyUsd === undefined ? undefined : usdToMicros(b.perWorkspaceDailyUsd));
  for (const [tool, action] of Object.entries(b.actions ?? {}).sort(([a], [b2]) => a.localeCompare(b2))) {
    if (!TOOL_UNIT.test(tool)) continue;
    add('run', `count:${tool}`, 'run', action.perRun);
    add('deployment', `count:${tool}`, 'day', action.perDay);
  }
  return result;
}

/**
 * The workspace's daily USD limit is declared by each of its deployments; the most restrictive
 * declaration of a live deployment applies to the whole workspace. Null when none declares one.
 */
export function workspaceDailyLimit(budgetsOfLiveDeployments: unknown[]): number | null {
  let limit: number | null = null;
  for (const budgets of budgetsOfLiveDeployments) {
    for (const declared of scopeLimits(budgets).workspace) {
      limit = limit === null ? declared.limit : Math.min(limit, declared.limit);
    }
  }
  return limit;
}

const WINDOW_MS: Record<BudgetWindow, number | null> = { run: null, hour: 3_600_000, day: 86_400_000, '30d': 30 * 86_400_000 };

/** Length of a rolling window in milliseconds; null for the whole run. */
export function windowLengthMs(window: BudgetWindow): number | null {
  return WINDOW_MS[window];
}
