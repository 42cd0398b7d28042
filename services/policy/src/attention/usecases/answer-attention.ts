import { Inject, Injectable } from '@nestjs/common';
import { ATTENTION_DEADLINE_PURPOSE, SchedulerCommands, type ActorRef, type AttentionScope, type AttentionView } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { ConcurrencyError, PostgresEventStore } from '@packetagent/eventstore';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../../policy.options';
import { AttentionAlreadyAnsweredError, AttentionNotFoundError } from '../../shared/errors';
import { decide, type AttentionCommand } from '../attention.decider';
import { attentionState, attentionView, commitAnswer, readAttention, type AttentionRow } from '../attention.rows';

export type Answer =
  | { kind: 'approve'; scope: AttentionScope }
  | { kind: 'reject'; reason: string }
  | { kind: 'expire'; at?: Date }
  | { kind: 'withdraw'; reason: string };

/** The actor of what policy records on its own: decisions, expiries, withdrawals. */
export const SYSTEM_ACTOR: ActorRef = { kind: 'service', id: 'policy' };

/**
 * Records one answer to an attention. Approve and reject come from operators; expire from the
 * deadline timer; withdraw from a revoked deployment. The first answer appended wins; an
 * operator who loses (or answers late) gets AttentionAlreadyAnsweredError naming the outcome.
 */
@Injectable()
export class AnswerAttention {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly bus: CommandBus,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  async execute(workspaceId: string, attentionId: string, answer: Answer, actor: ActorRef = SYSTEM_ACTOR): Promise<AttentionView> {
    const result = await this.answerOnce(workspaceId, attentionId, answer, actor);
    if (result.state !== 'open' && result.answeredNow && (answer.kind === 'approve' || answer.kind === 'reject' || answer.kind === 'withdraw')) {
      await this.cancelTimer(result.row);
    }
    if (result.lateAnswer) throw new AttentionAlreadyAnsweredError(attentionId, 'expired');
    return attentionView(result.row);
  }

  private async answerOnce(
    workspaceId: string,
    attentionId: string,
    answer: Answer,
    actor: ActorRef,
  ): Promise<{ row: AttentionRow; state: string; answeredNow: boolean; lateAnswer: boolean }> {
    try {
      return await this.store.transaction(async (client) => {
        const row = await readAttention(client, attentionId);
        if (!row || row.workspace_id !== workspaceId) throw new AttentionNotFoundError(attentionId);
        const command = this.command(answer, actor);
        const events = decide(command, attentionState(row));
        if (events.length === 0) return { row, state: row.state, answeredNow: false, lateAnswer: false };
        const updated = await commitAnswer(this.store, client, row, events, actor);
        const lateAnswer = (answer.kind === 'approve' || answer.kind === 'reject') && updated.state === 'expired';
        return { row: updated, state: updated.state, answeredNow: true, lateAnswer };
      });
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      // Another answer was appended first and has committed: report the state it left.
      const winner = await this.store.transaction((client) => readAttention(client, attentionId));
      if (winner && winner.state !== 'open') {
        if (answer.kind === 'expire' || answer.kind === 'withdraw') return { row: winner, state: winner.state, answeredNow: false, lateAnswer: false };
        throw new AttentionAlreadyAnsweredError(attentionId, winner.state);
      }
      throw error;
    }
  }

  private command(answer: Answer, actor: ActorRef): AttentionCommand {
    const now = this.options.clock();
    switch (answer.kind) {
      case 'approve':
        return { kind: 'approve', scope: answer.scope, actor, now };
      case 'reject':
        return { kind: 'reject', reason: answer.reason, actor, now };
      case 'expire':
        // The deadline timer fired at its due time; another host's clock running slightly behind must not keep the attention open.
        return { kind: 'expire', now: answer.at && answer.at > now ? answer.at : now };
      case 'withdraw':
        return { kind: 'withdraw', reason: answer.reason };
    }
  }

  /** Best effort: a timer left behind fires into an answered attention and changes nothing. */
  private async cancelTimer(row: AttentionRow): Promise<void> {
    if (!row.timer_set) return;
    await this.bus
      .request(
        SchedulerCommands.cancelTimer,
        { workspaceId: row.workspace_id, timerId: deadlineTimerId(row.attention_id), reason: `attention ${row.state}`, actor: SYSTEM_ACTOR },
        { timeoutMs: this.options.timerRequestTimeoutMs },
      )
      .catch((error: unknown) => this.options.log('warn', 'could not cancel an attention deadline timer', { attentionId: row.attention_id, error: String(error) }));
  }
}

export function deadlineTimerId(attentionId: string): string {
  return `${ATTENTION_DEADLINE_PURPOSE}-${attentionId}`;
}
