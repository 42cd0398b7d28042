import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { OnEvent } from '@packetagent/bus';
import { ATTENTION_DEADLINE_PURPOSE, type DecodedEvent, type SchedulerEventData } from '@packetagent/contracts';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';
import { AttentionNotFoundError } from '../shared/errors';
import { AnswerAttention } from './usecases/answer-attention';

const DeadlinePayload = z.object({ attentionId: z.string().min(1).max(200) });

/** Expires an attention when its deadline timer fires; answered ones stay as they are. */
@Injectable()
export class DeadlineTimersConsumer {
  constructor(
    private readonly answerAttention: AnswerAttention,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  @OnEvent({ durable: 'policy-attention-deadlines', filter: '*.timer.timer.fired' })
  async onTimerFired(event: DecodedEvent): Promise<void> {
    const data = event.data as SchedulerEventData<'timer.fired'>;
    if (data.purpose !== ATTENTION_DEADLINE_PURPOSE) return;
    const payload = DeadlinePayload.safeParse(data.payload);
    if (!payload.success) {
      this.options.log('warn', 'attention deadline timer without an attention id', { timerId: data.timerId });
      return;
    }
    try {
      const at = new Date(Math.max(Date.parse(data.firedAt), Date.parse(data.dueAt)));
      await this.answerAttention.execute(event.workspaceId, payload.data.attentionId, { kind: 'expire', at });
    } catch (error) {
      if (error instanceof AttentionNotFoundError) {
        this.options.log('warn', 'attention deadline timer for an unknown attention', { timerId: data.timerId });
        return;
      }
      throw error;
    }
  }
}
