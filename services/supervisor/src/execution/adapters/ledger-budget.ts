import type { CommandBus } from '@packetagent/bus';
import { BudgetCommands, MICRO_USD_PER_USD, type JsonValue } from '@packetagent/contracts';
import type { BudgetAnswer, BudgetRaise } from '../../run/run.intent';
import type { BudgetPort, BudgetRefusal } from '../ports';
import { withRetries } from '../retry';
import { SUPERVISOR_ACTOR } from '../supervisor-actor';

/** The budget ledger over its commands: reserve before spending, settle to the actual, release what was not spent. */
export class LedgerBudget implements BudgetPort {
  constructor(
    private readonly commands: CommandBus,
    private readonly run: { runId: string; workspaceId: string },
    private readonly log: (level: 'warn', message: string, fields: Record<string, unknown>) => void,
  ) {}

  async reserve(amounts: Array<{ unit: string; amount: number }>, key: string, signal: AbortSignal): Promise<{ id: string; refused: null } | { id: null; refused: BudgetRefusal }> {
    const result = await withRetries(
      () =>
        this.commands.request(BudgetCommands.reserve, {
          workspaceId: this.run.workspaceId,
          runId: this.run.runId,
          amounts,
          ttlSeconds: 900,
          idempotencyKey: `${this.run.runId}:${key}`,
          actor: SUPERVISOR_ACTOR,
        }),
      signal,
      30_000,
    );
    if (result.state === 'refused') {
      const scope = result.scope;
      return {
        id: null,
        refused: {
          detail: `${scope.kind} ${scope.id} ${scope.unit} (${scope.window}): limit ${result.limit}, spent ${result.spent}, held ${result.held}, asked ${result.requested} (${result.reason})`,
          scope: scope as unknown as JsonValue,
          usage: { kind: scope.kind, unit: scope.unit, reason: result.reason, limit: result.limit, spent: result.spent, held: result.held, requested: result.requested },
        },
      };
    }
    return { id: result.reservationId, refused: null };
  }

  async settle(reservationId: string | null, actual: Array<{ unit: string; amount: number }>): Promise<void> {
    if (!reservationId) return;
    await withRetries(
      () => this.commands.request(BudgetCommands.settle, { workspaceId: this.run.workspaceId, reservationId, actual, actor: SUPERVISOR_ACTOR }),
      new AbortController().signal,
    );
  }

  async raiseRunLimit(raise: { attentionId: string; amountMicroUsd: number; approvedBy: BudgetAnswer['approvedBy']; role: BudgetAnswer['role'] }, signal: AbortSignal): Promise<BudgetRaise> {
    const result = await withRetries(
      () =>
        this.commands.request(BudgetCommands.raiseRunLimit, {
          workspaceId: this.run.workspaceId,
          runId: this.run.runId,
          amount: raise.amountMicroUsd,
          attentionId: raise.attentionId,
          actor: raise.approvedBy ?? SUPERVISOR_ACTOR,
          actorRole: raise.role,
        }),
      signal,
    );
    return { raisedUsd: result.raised / MICRO_USD_PER_USD, limitUsd: result.limitAfter / MICRO_USD_PER_USD, cappedBy: result.cappedBy as unknown as JsonValue };
  }

  async release(reservationId: string | null): Promise<void> {
    if (!reservationId) return;
    await withRetries(
      () => this.commands.request(BudgetCommands.release, { workspaceId: this.run.workspaceId, reservationId, actor: SUPERVISOR_ACTOR }),
      new AbortController().signal,
    ).catch((error: unknown) => {
      this.log('warn', 'reservation not released', { reservationId, error: error instanceof Error ? error.message : String(error) });
    });
  }
}
