import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { NOTIFICATION_CHANNELS, NOTIFICATION_EVENTS, NOTIFICATION_ROLES } from '../worker-definition/schema';

/**
 * Events of the notifications service. Each delivery is a stream of its own (`delivery-<id>`):
 * queued once per (source event, route), then delivered or dead-lettered, and redriven by an
 * operator. Each remote control is a stream (`callback-<id>`) that records its one use. None
 * carries a credential value, a signing secret or a callback token.
 */
const id = z.string().min(1).max(200);

export const NotificationTriggerSchema = z.enum(NOTIFICATION_EVENTS);
export type NotificationTrigger = z.infer<typeof NotificationTriggerSchema>;
export const NotificationChannelSchema = z.enum(NOTIFICATION_CHANNELS);

/** A route as the pinned definition declares it, with its position there. */
export const DeliveryRouteSchema = z.object({
  index: z.number().int().min(0).max(15),
  name: z.string().max(41).nullable(),
  channel: NotificationChannelSchema,
  credential: z.string().max(63).nullable(),
  to: z.string().max(2048).nullable(),
  role: z.enum(NOTIFICATION_ROLES),
});
export type DeliveryRoute = z.infer<typeof DeliveryRouteSchema>;

export const REMOTE_ACTIONS = ['approve', 'approve_for_run', 'reject', 'pause', 'resume', 'stop', 'revoke', 'open'] as const;
export const RemoteActionSchema = z.enum(REMOTE_ACTIONS);
export type RemoteAction = z.infer<typeof RemoteActionSchema>;

export const CallbackTargetSchema = z.object({ kind: z.enum(['attention', 'run']), id });
export type CallbackTarget = z.infer<typeof CallbackTargetSchema>;

export const NotificationQueuedV1 = z.object({
  deliveryId: id,
  /** Stable across redeliveries of the source event: `<source event id>:<route index>`. */
  idempotencyKey: z.string().min(1).max(300),
  trigger: NotificationTriggerSchema,
  route: DeliveryRouteSchema,
  source: z.object({ eventId: id, type: z.string().max(200), streamId: z.string().max(300) }),
  runId: id.nullable(),
  deploymentId: id.nullable(),
  attentionId: id.nullable(),
  expiresAt: z.iso.datetime(),
  /** The remote controls the message offers, by id (their links are derived, never stored). */
  callbacks: z.array(z.object({ callbackId: id, action: RemoteActionSchema, expiresAt: z.iso.datetime() })),
});

export const DeliveryAttemptSchema = z.object({
  at: z.iso.datetime(),
  /** Time since the previous attempt (null for the first). */
  afterMs: z.number().int().min(0).nullable(),
  outcome: z.enum(['delivered', 'failed']),
  status: z.number().int().nullable(),
  code: z.string().max(100).nullable(),
  message: z.string().max(1000).nullable(),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>;

export const NotificationDeliveredV1 = z.object({
  deliveryId: id,
  attempts: z.number().int().min(1),
  /** The wait before each retry, as scheduled (backoff with jitter, or the receiver's Retry-After). */
  backoffMs: z.array(z.number().int().min(0)),
  status: z.number().int().nullable(),
});

export const NotificationDeadLetteredV1 = z.object({
  deliveryId: id,
  attempts: z.number().int().min(0),
  reason: z.object({ code: z.string().max(100), message: z.string().max(1000) }),
});

export const NotificationRedrivenV1 = z.object({ deliveryId: id, previousAttempts: z.number().int().min(0), expiresAt: z.iso.datetime() });

export const RemoteControlUsedV1 = z.object({
  callbackId: id,
  deliveryId: id,
  action: RemoteActionSchema,
  target: CallbackTargetSchema,
  /** `executed`, or the problem code of the command it ran (the link is spent either way). */
  outcome: z.string().min(1).max(100),
  /** SHA-256 of the request's user agent and address: enough to tell two uses apart, nothing to identify a person by. */
  requestDigest: z.string().regex(/^[0-9a-f]{64}$/),
});

export const NotificationEvents = {
  'notification.queued': NotificationQueuedV1,
  'notification.delivered': NotificationDeliveredV1,
  'notification.dead_lettered': NotificationDeadLetteredV1,
  'notification.redriven': NotificationRedrivenV1,
  'remote_control.used': RemoteControlUsedV1,
} as const;

export type NotificationEventType = keyof typeof NotificationEvents;
export type NotificationEventData<T extends NotificationEventType> = z.infer<(typeof NotificationEvents)[T]>;

export const DELIVERY_STREAM_CATEGORY = 'delivery';
export const CALLBACK_STREAM_CATEGORY = 'callback';
export const deliveryStream = (deliveryId: string): string => `${DELIVERY_STREAM_CATEGORY}-${deliveryId}`;
export const callbackStream = (callbackId: string): string => `${CALLBACK_STREAM_CATEGORY}-${callbackId}`;

export function registerNotificationEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(NotificationEvents);
}
