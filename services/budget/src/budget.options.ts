export type BudgetLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface BudgetModuleOptions {
  /** How often each replica looks for reservations past their TTL, in milliseconds. */
  sweepIntervalMs?: number;
  /** Reservations expired per sweep transaction. */
  sweepBatchSize?: number;
  /** Share of a limit (percent) at which `budget.warning` is announced, once per scope and window. */
  warningPercent?: number;
  /** False turns the expiry sweeper off in this replica (holds past their TTL stop counting anyway). */
  sweeper?: boolean;
  log?: BudgetLog;
}

export type ResolvedBudgetOptions = Required<BudgetModuleOptions>;

export const BUDGET_OPTIONS = Symbol('BUDGET_OPTIONS');

export function resolveBudgetOptions(options: BudgetModuleOptions = {}): ResolvedBudgetOptions {
  const resolved: ResolvedBudgetOptions = {
    sweepIntervalMs: options.sweepIntervalMs ?? 1_000,
    sweepBatchSize: options.sweepBatchSize ?? 100,
    warningPercent: options.warningPercent ?? 80,
    sweeper: options.sweeper ?? true,
    log: options.log ?? (() => undefined),
  };
  if (!Number.isInteger(resolved.sweepIntervalMs) || resolved.sweepIntervalMs < 10) throw new Error('budget option sweepIntervalMs must be an integer of at least 10 milliseconds');
  if (!Number.isInteger(resolved.sweepBatchSize) || resolved.sweepBatchSize < 1) throw new Error('budget option sweepBatchSize must be a positive integer');
  if (!Number.isInteger(resolved.warningPercent) || resolved.warningPercent < 1 || resolved.warningPercent > 100) {
    throw new Error('budget option warningPercent must be an integer from 1 to 100');
  }
  return resolved;
}
