import type { BudgetEventData, BudgetScope, DecodedEvent } from '@packetagent/contracts';
import type { Projection, RowChange } from '../projection';
import type { Row, TableSpec } from '../table';

export const BUDGET_USAGE_TABLE: TableSpec = {
  name: 'budget_usage',
  columns: [
    { name: 'workspace_id', type: 'text' },
    { name: 'kind', type: 'text' },
    { name: 'owner_id', type: 'text' },
    { name: 'unit', type: 'text' },
    { name: 'win', type: 'text' },
    { name: 'held', type: 'bigint' },
    { name: 'spent', type: 'bigint' },
    { name: 'warned_limit', type: 'bigint', nullable: true },
    { name: 'updated_at', type: 'timestamptz' },
  ],
  primaryKey: ['workspace_id', 'kind', 'owner_id', 'unit', 'win'],
};

export const BUDGET_SPEND_TABLE: TableSpec = {
  name: 'budget_spend',
  columns: [
    { name: 'workspace_id', type: 'text' },
    // UTC day of the settlement, YYYY-MM-DD.
    { name: 'day', type: 'text' },
    { name: 'unit', type: 'text' },
    { name: 'spent', type: 'bigint' },
  ],
  primaryKey: ['workspace_id', 'day', 'unit'],
};

/**
 * Held and spent amounts per limited scope since the scope was first used (the ledger, in the
 * budget service, is the authority for rolling windows), and actual spend per UTC day and unit
 * from settlements, whether or not a scope limited them. Amounts are integers: micro-dollars
 * for `usd`, calls for `count:<tool>`.
 */
export const budgetUsageProjection: Projection = {
  name: 'budget_usage',
  tables: [BUDGET_USAGE_TABLE, BUDGET_SPEND_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    const at = event.occurredAt;
    const scopeChange = (scope: BudgetScope, held: number, spent: number, warnedLimit?: number): RowChange => ({
      table: 'budget_usage',
      key: { workspace_id: event.workspaceId, kind: scope.kind, owner_id: scope.id, unit: scope.unit, win: scope.window },
      evolve: (current: Row | null) => ({
        workspace_id: event.workspaceId,
        kind: scope.kind,
        owner_id: scope.id,
        unit: scope.unit,
        win: scope.window,
        held: Math.max(0, Number(current?.['held'] ?? 0) + held),
        spent: Number(current?.['spent'] ?? 0) + spent,
        warned_limit: warnedLimit ?? current?.['warned_limit'] ?? null,
        updated_at: at,
      }),
    });
    switch (event.type) {
      case 'budget.reserved':
        return (event.data as BudgetEventData<'budget.reserved'>).scopes.map((scope) => scopeChange(scope, scope.amount, 0));
      case 'budget.settled': {
        const data = event.data as BudgetEventData<'budget.settled'>;
        const day = at.slice(0, 10);
        return [
          ...data.scopes.map((scope) => scopeChange(scope, -scope.held, scope.spent)),
          ...data.actual
            .filter((amount) => amount.amount > 0)
            .map((amount): RowChange => ({
              table: 'budget_spend',
              key: { workspace_id: event.workspaceId, day, unit: amount.unit },
              evolve: (current) => ({ workspace_id: event.workspaceId, day, unit: amount.unit, spent: Number(current?.['spent'] ?? 0) + amount.amount }),
            })),
        ];
      }
      case 'budget.released':
      case 'budget.expired':
        return (event.data as BudgetEventData<'budget.released'>).scopes.map((scope) => scopeChange(scope, -scope.amount, 0));
      case 'budget.warning': {
        const data = event.data as BudgetEventData<'budget.warning'>;
        return [scopeChange(data.scope, 0, 0, data.limit)];
      }
      default:
        return [];
    }
  },
};
