import { Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import { QueueDeliveries } from '../outbox/queue-deliveries';

/**
 * The events people are told about, from PA_EVENTS through durable consumers shared by every
 * replica: attentions (requests, reminders, escalations), run progress and outcomes, budget
 * warnings. Each message queues its deliveries once; a redelivered one queues nothing more.
 */
@Injectable()
export class NotificationSourcesConsumer {
  constructor(private readonly queue: QueueDeliveries) {}

  @OnEvent({ durable: 'notifications-attention', filter: '*.attention.>', ackWaitMs: 30_000, maxAckPending: 64, concurrency: 16 })
  async onAttention(event: DecodedEvent): Promise<void> {
    await this.queue.execute(event);
  }

  // One at a time: a run's progress messages queue in the order they happened.
  @OnEvent({ durable: 'notifications-runs', filter: '*.run.>', ackWaitMs: 30_000 })
  async onRun(event: DecodedEvent): Promise<void> {
    await this.queue.execute(event);
  }

  @OnEvent({ durable: 'notifications-budgets', filter: '*.budget_scope.budget.warning', ackWaitMs: 30_000 })
  async onBudgetWarning(event: DecodedEvent): Promise<void> {
    await this.queue.execute(event);
  }
}
