import { roleHasPermission, type BudgetScope, type Role } from '@packetagent/contracts';

/** A USD scope of the run, locked, with what it has spent and holds now (micro-dollars). */
export interface LockedUsdScope {
  scope: BudgetScope;
  limit: number;
  spent: number;
  held: number;
}

export interface RaiseInput {
  run: LockedUsdScope;
  /** The deployment's and workspace's USD scopes the run reserves in. */
  others: LockedUsdScope[];
  requested: number;
  approverRole: Role | null;
}

export interface RaiseDecision {
  raised: number;
  limitBefore: number;
  limitAfter: number;
  cappedBy: BudgetScope | null;
}

/**
 * How far the run's own limit goes up for an approved request: by what was asked, unless the
 * room that leaves the run would pass what its deployment or workspace has left, in which case
 * only up to that (nothing, when they have nothing left). An approver whose role holds
 * deployment-control may give the run more room than that; the other scopes still refuse any
 * reservation past their own limits. No recorded role is no deployment-control.
 */
export function decideRunLimitRaise(input: RaiseInput): RaiseDecision {
  const { run, requested } = input;
  const limitBefore = run.limit;
  const uncapped = input.approverRole !== null && roleHasPermission(input.approverRole, 'deployment-control');
  let raised = requested;
  let cappedBy: BudgetScope | null = null;
  if (!uncapped) {
    const room = Math.max(0, run.limit - run.spent - run.held);
    for (const other of input.others) {
      const left = Math.max(0, other.limit - other.spent - other.held);
      const allowed = Math.max(0, left - room);
      if (allowed < raised) {
        raised = allowed;
        cappedBy = other.scope;
      }
    }
  }
  return { raised, limitBefore, limitAfter: limitBefore + raised, cappedBy };
}
