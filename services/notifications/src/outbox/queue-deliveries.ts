import { Inject, Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import {
  deliveryStream,
  type DecodedEvent,
  type DeliveryRoute,
  type NotificationEvent,
  type NotificationEventData,
  type RemoteAction,
} from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import type { PoolClient } from 'pg';
import { actionLabel, remoteActions } from '../callbacks/remote-actions';
import type { OutboundMessage } from '../channels/channel';
import { NOTIFICATIONS_OPTIONS, type ResolvedNotificationsOptions } from '../notifications.options';
import { NOTIFICATIONS_ACTOR } from '../shared/actor';
import { composeMessage } from '../sources/compose-message';
import { RunContexts } from '../sources/run-context';
import { matchRoutes, triggersOf } from '../sources/source-triggers';
import { sourceFacts } from '../sources/source-run';
import { DeliveryDoorbell } from './doorbell';

const ATTENTION_TRIGGERS: ReadonlySet<NotificationEvent> = new Set(['attention', 'reminder', 'escalation']);

function runStateFor(trigger: NotificationEvent): string | null {
  if (ATTENTION_TRIGGERS.has(trigger)) return 'waiting';
  return trigger === 'progress' || trigger === 'budget_warning' ? 'active' : null;
}

/**
 * Turns one source event into one outbox row per route that listens to it, each with its
 * `notification.queued` and the remote controls its message offers, in one transaction. The
 * idempotency key is `<event id>:<route index>`: a redelivered event queues nothing twice.
 */
@Injectable()
export class QueueDeliveries {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly contexts: RunContexts,
    private readonly doorbell: DeliveryDoorbell,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: ResolvedNotificationsOptions,
  ) {}

  async execute(event: DecodedEvent): Promise<number> {
    if (event.type !== 'attention.escalated' && triggersOf(event.type).length === 0) return 0;
    const facts = await sourceFacts(this.store, event);
    if (!facts) return 0;
    const context = await this.contexts.load(event.workspaceId, facts.runId);
    if (!context) return 0;
    const matched = matchRoutes(context.definition.notifications, event.type, facts.escalateTo);
    if (matched.length === 0) return 0;

    const now = this.options.clock();
    const queued = await this.store.transaction(async (client) => {
      let count = 0;
      for (const { index, route, trigger } of matched) {
        const deliveryRoute: DeliveryRoute = {
          index,
          name: route.name ?? null,
          channel: route.channel,
          credential: route.credential ?? null,
          to: route.to ?? null,
          role: route.role ?? 'member',
        };
        const message = composeMessage({ event, trigger, pin: context.pin, runId: facts.runId, attention: facts.attention });
        const attentionDeadline = facts.attention ? Date.parse(facts.attention.deadline) : Number.POSITIVE_INFINITY;
        const expiresAt = new Date(Math.min(now.getTime() + 1_000 * this.options.deliveryTtlSeconds, Math.max(attentionDeadline, now.getTime() + 1_000)));
        const inserted = await this.insert(client, {
          event,
          trigger,
          route: deliveryRoute,
          message,
          runId: facts.runId,
          deploymentId: context.pin.deploymentId,
          attentionId: facts.attention?.id ?? null,
          expiresAt,
          now,
        });
        if (!inserted) continue;
        const actions = remoteActions({
          trigger,
          channel: route.channel,
          role: deliveryRoute.role,
          openAttention: facts.attention !== null && ATTENTION_TRIGGERS.has(trigger),
          runState: runStateFor(trigger),
        });
        const callbacks = await this.insertCallbacks(client, inserted, actions, {
          route: deliveryRoute,
          message,
          runId: facts.runId,
          attentionId: facts.attention?.id ?? null,
          versionDigest: context.pin.digest,
          attentionDeadline,
          now,
        });
        const data: NotificationEventData<'notification.queued'> = {
          deliveryId: inserted,
          idempotencyKey: `${event.id}:${index}`,
          trigger,
          route: deliveryRoute,
          source: { eventId: event.id, type: event.type, streamId: event.stream },
          runId: facts.runId,
          deploymentId: context.pin.deploymentId,
          attentionId: facts.attention?.id ?? null,
          expiresAt: expiresAt.toISOString(),
          callbacks,
        };
        await this.store.append(deliveryStream(inserted), 'no_stream', [{ type: 'notification.queued', data, actor: NOTIFICATIONS_ACTOR, causationId: event.id, correlationId: event.correlationId }], {
          workspaceId: event.workspaceId,
          client,
        });
        count += 1;
      }
      return count;
    });
    if (queued > 0) this.doorbell.ring();
    return queued;
  }

  private async insert(
    client: PoolClient,
    input: {
      event: DecodedEvent;
      trigger: NotificationEvent;
      route: DeliveryRoute;
      message: Omit<OutboundMessage, 'deliveryId'>;
      runId: string;
      deploymentId: string;
      attentionId: string | null;
      expiresAt: Date;
      now: Date;
    },
  ): Promise<string | null> {
    const deliveryId = uuidv7();
    const message: OutboundMessage = { deliveryId, ...input.message };
    const { rows } = await client.query<{ delivery_id: string }>(
      `INSERT INTO notifications.deliveries (delivery_id, workspace_id, idempotency_key, trigger, route, message, run_id, deployment_id, attention_id,
                                             source_event_id, thread_key, state, next_attempt_at, expires_at, stream_version)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, 'pending', $13, $12, 1)
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING delivery_id`,
      [
        deliveryId,
        input.event.workspaceId,
        `${input.event.id}:${input.route.index}`,
        input.trigger,
        JSON.stringify(input.route),
        JSON.stringify(message),
        input.runId,
        input.deploymentId,
        input.attentionId,
        input.event.id,
        `${input.runId}:${input.route.index}`,
        input.expiresAt,
        input.now,
      ],
    );
    return rows[0]?.delivery_id ?? null;
  }

  private async insertCallbacks(
    client: PoolClient,
    deliveryId: string,
    actions: RemoteAction[],
    input: {
      route: DeliveryRoute;
      message: Omit<OutboundMessage, 'deliveryId'>;
      runId: string;
      attentionId: string | null;
      versionDigest: string;
      attentionDeadline: number;
      now: Date;
    },
  ): Promise<NotificationEventData<'notification.queued'>['callbacks']> {
    const callbacks: NotificationEventData<'notification.queued'>['callbacks'] = [];
    const recipient = `${input.route.channel}:${input.route.to ?? `route-${input.route.index}`}`;
    for (const action of actions) {
      const answersAttention = action === 'approve' || action === 'approve_for_run' || action === 'reject';
      const ttl = input.now.getTime() + 1_000 * this.options.callbackTtlSeconds;
      // An answer is worth nothing after the attention's deadline.
      const expiresAt = new Date(answersAttention ? Math.min(ttl, input.attentionDeadline) : ttl);
      const callbackId = uuidv7();
      const target = answersAttention ? { kind: 'attention' as const, id: input.attentionId! } : { kind: 'run' as const, id: input.runId };
      await client.query(
        `INSERT INTO notifications.callbacks (callback_id, workspace_id, delivery_id, action, target_kind, target_id, run_id, role, recipient,
                                              worker_name, deployment_id, version_digest, summary, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          callbackId,
          input.message.workspaceId,
          deliveryId,
          action,
          target.kind,
          target.id,
          input.runId,
          input.route.role,
          recipient,
          input.message.worker.name,
          input.message.worker.deploymentId,
          input.versionDigest,
          `${actionLabel(action)}: ${input.message.title}`.slice(0, 500),
          expiresAt,
        ],
      );
      callbacks.push({ callbackId, action, expiresAt: expiresAt.toISOString() });
    }
    return callbacks;
  }
}
