import { Inject, Injectable } from '@nestjs/common';
import {
  ATTENTION_DEADLINE_PURPOSE,
  ATTENTION_ESCALATION_PURPOSE,
  ATTENTION_REMINDER_PURPOSE,
  SchedulerCommands,
  type ActorRef,
  type AttentionScope,
  type AttentionView,
  type JsonObject,
  type Role,
} from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { ConcurrencyError, PostgresEventStore } from '@packetagent/eventstore';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../../policy.options';
import { AttentionAlreadyAnsweredError, AttentionNotFoundError, EditNotSupportedError } from '../../shared/errors';
import { decide, type AttentionCommand } from '../attention.decider';
import { attentionState, attentionView, commitAnswer, readAttention, type ApprovedEdit, type AttentionRow } from '../attention.rows';
import { CheckEdit } from './check-edit';

/** What the caller says of the person answering: the rules' approvers are checked against it. */
export interface ApproverClaims {
  role?: Role | undefined;
  email?: string | undefined;
}

export type Answer =
  | ({ kind: 'approve'; scope: AttentionScope; arguments?: JsonObject | undefined } & ApproverClaims)
  | ({ kind: 'reject'; reason: string } & ApproverClaims)
  | { kind: 'expire'; at?: Date }
  | { kind: 'remind'; at?: Date }
  | { kind: 'escalate'; at?: Date }
  | { kind: 'withdraw'; reason: string };

/** Timers an attention may have; each is cancelled once it is answered. */
const TIMER_PURPOSES = [ATTENTION_DEADLINE_PURPOSE, ATTENTION_REMINDER_PURPOSE, ATTENTION_ESCALATION_PURPOSE] as const;

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
    private readonly checkEdit: CheckEdit,
  ) {}

  async execute(workspaceId: string, attentionId: string, answer: Answer, actor: ActorRef = SYSTEM_ACTOR): Promise<AttentionView> {
    const result = await this.answerOnce(workspaceId, attentionId, answer, actor);
    // Closed by its own deadline timer, only the reminder and escalation are left to cancel.
    if (result.state !== 'open' && result.answeredNow) await this.cancelTimers(result.row, answer.kind === 'expire');
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
        let events = decide(command, attentionState(row));
        let approvedEdit: ApprovedEdit | undefined;
        // An edit is checked only once the answer would approve: a refused approver learns nothing of the tool's schema or grants.
        if (answer.kind === 'approve' && answer.arguments && command.kind === 'approve') {
          if (events[0]?.type === 'attention.approval_recorded') throw new EditNotSupportedError('an approval that needs more than one approver cannot edit the call');
          if (events[0]?.type === 'attention.approved') {
            approvedEdit = await this.checkEdit.execute(client, row, answer.arguments, actor);
            events = decide({ ...command, edit: approvedEdit.edit }, attentionState(row));
          }
        }
        if (events.length === 0) return { row, state: row.state, answeredNow: false, lateAnswer: false };
        const updated = await commitAnswer(this.store, client, row, events, actor, approvedEdit);
        const lateAnswer = (answer.kind === 'approve' || answer.kind === 'reject') && updated.state === 'expired';
        return { row: updated, state: updated.state, answeredNow: true, lateAnswer };
      });
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      // Another answer was appended first and has committed: report the state it left.
      const winner = await this.store.transaction((client) => readAttention(client, attentionId));
      if (winner && winner.state !== 'open') {
        if (answer.kind !== 'approve' && answer.kind !== 'reject') return { row: winner, state: winner.state, answeredNow: false, lateAnswer: false };
        throw new AttentionAlreadyAnsweredError(attentionId, winner.state);
      }
      throw error;
    }
  }

  private command(answer: Answer, actor: ActorRef): AttentionCommand {
    const now = this.options.clock();
    switch (answer.kind) {
      case 'approve':
        return { kind: 'approve', scope: answer.scope, approver: { actor, role: answer.role, email: answer.email }, now };
      case 'reject':
        return { kind: 'reject', reason: answer.reason, approver: { actor, role: answer.role, email: answer.email }, now };
      case 'expire':
      case 'remind':
      case 'escalate':
        // The timer fired at its due time; another host's clock running slightly behind must not keep the attention open.
        return { kind: answer.kind, now: answer.at && answer.at > now ? answer.at : now };
      case 'withdraw':
        return { kind: 'withdraw', reason: answer.reason };
    }
  }

  /** Best effort: a timer left behind fires into an answered attention and changes nothing. */
  private async cancelTimers(row: AttentionRow, deadlineFired: boolean): Promise<void> {
    if (!row.timer_set) return;
    const purposes = TIMER_PURPOSES.filter((purpose) => {
      if (purpose === ATTENTION_DEADLINE_PURPOSE) return !deadlineFired;
      return purpose === ATTENTION_REMINDER_PURPOSE ? row.remind_at !== null && row.reminded_at === null : row.escalate_at !== null && row.escalated_at === null;
    });
    await Promise.all(
      purposes.map((purpose) =>
        this.bus
          .request(
            SchedulerCommands.cancelTimer,
            { workspaceId: row.workspace_id, timerId: attentionTimerId(purpose, row.attention_id), reason: `attention ${row.state}`, actor: SYSTEM_ACTOR },
            { timeoutMs: this.options.timerRequestTimeoutMs },
          )
          .catch((error: unknown) => this.options.log('warn', 'could not cancel an attention timer', { attentionId: row.attention_id, purpose, error: String(error) })),
      ),
    );
  }
}

export function attentionTimerId(purpose: (typeof TIMER_PURPOSES)[number], attentionId: string): string {
  return `${purpose}-${attentionId}`;
}

export function deadlineTimerId(attentionId: string): string {
  return attentionTimerId(ATTENTION_DEADLINE_PURPOSE, attentionId);
}
