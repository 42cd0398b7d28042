import type { BudgetScope } from '@packetagent/contracts';
import { decideRunLimitRaise, type LockedUsdScope } from './run-limit-raise';

const runScope: BudgetScope = { kind: 'run', id: 'run1', unit: 'usd', window: 'run' };
const deploymentDay: BudgetScope = { kind: 'deployment', id: 'dep1', unit: 'usd', window: 'day' };
const workspaceDay: BudgetScope = { kind: 'workspace', id: 'ws1', unit: 'usd', window: 'day' };

const run = (limit: number, spent: number, held = 0): LockedUsdScope => ({ scope: runScope, limit, spent, held });
const other = (scope: BudgetScope, limit: number, spent: number, held = 0): LockedUsdScope => ({ scope, limit, spent, held });

describe(decideRunLimitRaise.name, () => {
  it('raises the run limit by what was asked when nothing else limits the run', () => {
    expect(decideRunLimitRaise({ run: run(500_000, 500_000), others: [], requested: 500_000, approverRole: 'member' })).toEqual({
      raised: 500_000,
      limitBefore: 500_000,
      limitAfter: 1_000_000,
      cappedBy: null,
    });
  });

  it('raises by what was asked when the deployment and workspace have that much left', () => {
    const sut = decideRunLimitRaise({ run: run(500_000, 500_000), others: [other(deploymentDay, 5_000_000, 1_000_000), other(workspaceDay, 20_000_000, 0)], requested: 500_000, approverRole: null });
    expect(sut).toMatchObject({ raised: 500_000, limitAfter: 1_000_000, cappedBy: null });
  });

  it('caps the raise at what the tightest of the deployment and workspace has left', () => {
    const sut = decideRunLimitRaise({
      run: run(500_000, 500_000),
      others: [other(deploymentDay, 5_000_000, 4_700_000), other(workspaceDay, 20_000_000, 19_900_000, 50_000)],
      requested: 500_000,
      approverRole: 'member',
    });
    expect(sut).toEqual({ raised: 50_000, limitBefore: 500_000, limitAfter: 550_000, cappedBy: workspaceDay });
  });

  it('counts the room the run still has against what the others have left', () => {
    const sut = decideRunLimitRaise({ run: run(500_000, 400_000), others: [other(deploymentDay, 1_000_000, 700_000)], requested: 500_000, approverRole: 'viewer' });
    // 300 000 left in the deployment, 100 000 of it already the run's room: 200 000 more.
    expect(sut).toMatchObject({ raised: 200_000, limitAfter: 700_000, cappedBy: deploymentDay });
  });

  it('raises nothing when the deployment has nothing left', () => {
    const sut = decideRunLimitRaise({ run: run(500_000, 500_000), others: [other(deploymentDay, 1_000_000, 1_000_000)], requested: 500_000, approverRole: 'member' });
    expect(sut).toEqual({ raised: 0, limitBefore: 500_000, limitAfter: 500_000, cappedBy: deploymentDay });
  });

  it.each(['admin', 'owner'] as const)('raises by what was asked past the others when the approver is %s (deployment-control)', (role) => {
    const sut = decideRunLimitRaise({ run: run(500_000, 500_000), others: [other(deploymentDay, 1_000_000, 1_000_000)], requested: 500_000, approverRole: role });
    expect(sut).toEqual({ raised: 500_000, limitBefore: 500_000, limitAfter: 1_000_000, cappedBy: null });
  });

  it('treats an approval that recorded no role as lacking deployment-control', () => {
    const sut = decideRunLimitRaise({ run: run(500_000, 500_000), others: [other(deploymentDay, 1_000_000, 900_000)], requested: 500_000, approverRole: null });
    expect(sut).toMatchObject({ raised: 100_000, cappedBy: deploymentDay });
  });
});
