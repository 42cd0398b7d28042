export { BudgetModule } from './budget.module';
export { resolveBudgetOptions, BUDGET_OPTIONS, type BudgetModuleOptions, type ResolvedBudgetOptions, type BudgetLog } from './budget.options';
export { ExpirySweeper } from './reservations/expiry-sweeper';
export { scopeLimits, usdToMicros, workspaceDailyLimit, type ScopeLimit, type LimitsByKind } from './limits/scope-limits';
export { ApplyLimitsEvent, type ApplyOutcome } from './limits/usecases/apply-limits-event/apply-limits-event';
export { Reserve, type ReserveRequest } from './reservations/usecases/reserve/reserve';
export { Settle, type SettleRequest, type SettleResult } from './reservations/usecases/settle/settle';
