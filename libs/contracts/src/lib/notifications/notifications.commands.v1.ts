import { z } from 'zod';
import { defineCommand } from '../commands';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { Identifiers } from '../envelope';
import { CallbackTargetSchema, DeliveryAttemptSchema, DeliveryRouteSchema, NotificationTriggerSchema, RemoteActionSchema } from './notifications.events.v1';

const workspaceId = z.string().regex(Identifiers.workspace);
const id = z.string().min(1).max(200);

export const DELIVERY_STATES = ['pending', 'delivered', 'dead'] as const;
export const DeliveryStateSchema = z.enum(DELIVERY_STATES);
export type DeliveryState = z.infer<typeof DeliveryStateSchema>;

export const DeliverySchema = z.object({
  deliveryId: id,
  workspaceId,
  idempotencyKey: z.string(),
  trigger: NotificationTriggerSchema,
  route: DeliveryRouteSchema,
  state: DeliveryStateSchema,
  runId: id.nullable(),
  deploymentId: id.nullable(),
  attentionId: id.nullable(),
  sourceEventId: id,
  attempts: z.number().int().min(0),
  attemptLog: z.array(DeliveryAttemptSchema),
  nextAttemptAt: z.iso.datetime().nullable(),
  expiresAt: z.iso.datetime(),
  deliveredAt: z.iso.datetime().nullable(),
  lastError: z.object({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.iso.datetime(),
});
export type DeliveryView = z.infer<typeof DeliverySchema>;

/** What a remote-control link shows before it is used (and after: its state says so). */
export const CallbackViewSchema = z.object({
  callbackId: id,
  workspaceId,
  action: RemoteActionSchema,
  target: CallbackTargetSchema,
  state: z.enum(['usable', 'used', 'expired']),
  expiresAt: z.iso.datetime(),
  worker: z.object({ name: z.string(), deploymentId: id.nullable(), versionDigest: z.string().nullable() }),
  summary: z.string(),
  /** Read-only links (`open`) answer the run's or attention's current state. */
  detail: z.record(z.string(), z.json()).nullable(),
});
export type CallbackView = z.infer<typeof CallbackViewSchema>;

export const CallbackResultSchema = z.object({ callbackId: id, action: RemoteActionSchema, target: CallbackTargetSchema, outcome: z.literal('executed'), result: z.json() });

export const NotificationsErrorCodes = {
  deliveryNotFound: 'delivery_not_found',
  /** Only a dead-lettered delivery can be redriven. */
  deliveryNotDead: 'delivery_not_dead',
  /** Unknown, forged or malformed link. */
  callbackInvalid: 'callback_invalid',
  callbackUsed: 'callback_used',
  callbackExpired: 'callback_expired',
} as const;

export const NotificationsCommands = {
  listDeliveries: defineCommand(
    'notifications.deliveries.list',
    z.object({
      workspaceId,
      state: DeliveryStateSchema.nullable().default(null),
      runId: id.nullable().default(null),
      limit: z.number().int().min(1).max(500).default(100),
      /** The last delivery id of the previous page (ids are time-ordered). */
      after: id.nullable().default(null),
    }),
    z.object({ items: z.array(DeliverySchema), next: id.nullable() }),
  ),
  getDelivery: defineCommand('notifications.deliveries.get', z.object({ workspaceId, deliveryId: id }), DeliverySchema),
  redrive: defineCommand('notifications.deliveries.redrive', z.object({ workspaceId, deliveryId: id, actor: ActorSchema }), DeliverySchema),
  inspectCallback: defineCommand('notifications.callbacks.inspect', z.object({ token: z.string().min(1).max(300) }), CallbackViewSchema),
  executeCallback: defineCommand(
    'notifications.callbacks.execute',
    z.object({
      token: z.string().min(1).max(300),
      /** A rejection's reason, when the recipient gave one. */
      reason: z.string().min(1).max(1000).optional(),
      requestDigest: z.string().regex(/^[0-9a-f]{64}$/),
    }),
    CallbackResultSchema,
  ),
} as const;
