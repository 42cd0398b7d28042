import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { OnEvent } from '@packetagent/bus';
import {
  ATTENTION_DEADLINE_PURPOSE,
  ATTENTION_ESCALATION_PURPOSE,
  ATTENTION_REMINDER_PURPOSE,
  type DecodedEvent,
  type SchedulerEventData,
} from '@packetagent/contracts';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';
import { AttentionNotFoundError } from '../shared/errors';
import { AnswerAttention } from './usecases/answer-attention';

const TimerPayload = z.object({ attentionId: z.string().min(1).max(200) });

const ANSWER_OF_PURPOSE = {
  [ATTENTION_DEADLINE_PURPOSE]: 'expire',
  [ATTENTION_REMINDER_PURPOSE]: 'remind',
  [ATTENTION_ESCALATION_PURPOSE]: 'escalate',
} as const;

/**
 * An attention's timers: the deadline expires it, the reminder and the escalation are recorded
 * once each. Answered ones stay as they are.
 */
@Injectable()
export class DeadlineTimersConsumer {
  constructor(
    private readonly answerAttention: AnswerAttention,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  @OnEvent({ durable: 'policy-attention-deadlines', filter: '*.timer.timer.fired' })
  async onTimerFired(event: DecodedEvent): Promise<void> {
    const data = event.data as SchedulerEventData<'timer.fired'>;
    if (!Object.hasOwn(ANSWER_OF_PURPOSE, data.purpose)) return;
    const kind = ANSWER_OF_PURPOSE[data.purpose as keyof typeof ANSWER_OF_PURPOSE];
    const payload = TimerPayload.safeParse(data.payload);
    if (!payload.success) {
      this.options.log('warn', 'attention timer without an attention id', { timerId: data.timerId, purpose: data.purpose });
      return;
    }
    try {
      const at = new Date(Math.max(Date.parse(data.firedAt), Date.parse(data.dueAt)));
      await this.answerAttention.execute(event.workspaceId, payload.data.attentionId, { kind, at });
    } catch (error) {
      if (error instanceof AttentionNotFoundError) {
        this.options.log('warn', 'attention timer for an unknown attention', { timerId: data.timerId, purpose: data.purpose });
        return;
      }
      throw error;
    }
  }
}
