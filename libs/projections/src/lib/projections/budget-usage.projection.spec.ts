import type { Row } from '../table';
import { decoded } from '../testing/run-history';
import { budgetUsageProjection } from './budget-usage.projection';

const runScope = { kind: 'run', id: 'run1', unit: 'usd', window: 'run' } as const;
const wsScope = { kind: 'workspace', id: 'ws1', unit: 'usd', window: 'day' } as const;

/** Applies the projection's changes to an in-memory table keyed like the real one. */
function project(events: Array<{ type: string; data: unknown }>): Map<string, Row> {
  const tables = new Map<string, Row>();
  events.forEach((event, index) => {
    for (const change of budgetUsageProjection.changes(decoded(event.type, event.data, { stream: 'budget-res1', position: index + 1 }))) {
      const key = `${change.table}:${JSON.stringify(change.key)}`;
      const next = change.evolve(tables.get(key) ?? null);
      if (next) tables.set(key, next);
      else tables.delete(key);
    }
  });
  return tables;
}

describe('budgetUsageProjection', () => {
  it('holds on reservation and turns the hold into spend on settlement, with the day total from the actual amounts', () => {
    const sut = project([
      { type: 'budget.reserved', data: { reservationId: 'res1', runId: 'run1', deploymentId: 'dep1', idempotencyKey: 'k', amounts: [{ unit: 'usd', amount: 500 }], scopes: [{ ...runScope, amount: 500 }, { ...wsScope, amount: 500 }], expiresAt: '2026-11-30T09:00:00.000Z' } },
      { type: 'budget.settled', data: { reservationId: 'res1', runId: 'run1', actual: [{ unit: 'usd', amount: 300 }], scopes: [{ ...runScope, held: 500, spent: 300 }, { ...wsScope, held: 500, spent: 300 }] } },
    ]);
    const rows = [...sut.values()];
    expect(rows.filter((row) => row['kind'] === 'run')).toEqual([expect.objectContaining({ held: 0, spent: 300 })]);
    expect(rows.filter((row) => row['kind'] === 'workspace')).toEqual([expect.objectContaining({ held: 0, spent: 300 })]);
    expect(rows.filter((row) => row['day'])).toEqual([{ workspace_id: 'ws1', day: '2026-11-30', unit: 'usd', spent: 300 }]);
  });

  it('frees the hold when a reservation is released or expires', () => {
    const reserved = { type: 'budget.reserved', data: { reservationId: 'res1', runId: 'run1', deploymentId: 'dep1', idempotencyKey: 'k', amounts: [], scopes: [{ ...runScope, amount: 70 }], expiresAt: '2026-11-30T09:00:00.000Z' } };
    const released = project([reserved, { type: 'budget.released', data: { reservationId: 'res1', runId: 'run1', scopes: [{ ...runScope, amount: 70 }] } }]);
    expect([...released.values()]).toEqual([expect.objectContaining({ held: 0, spent: 0 })]);
  });
});
