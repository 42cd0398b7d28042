import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { DeliveryStateSchema, NotificationsCommands } from '@packetagent/contracts';

export const DeliveriesQuery = z.object({
  state: DeliveryStateSchema.optional(),
  runId: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** The `next` of the previous page. */
  after: z.string().uuid().optional(),
});
export class DeliveriesQueryDto extends createZodDto(DeliveriesQuery) {}

/** A remote control's optional reason (a rejection's, a stop's). */
export const UseCallbackBody = z.strictObject({ reason: z.string().trim().min(1).max(1000).optional() });
export class UseCallbackDto extends createZodDto(UseCallbackBody) {}

export class DeliveryPageDto extends createZodDto(NotificationsCommands.listDeliveries.response) {}
/** A delivery with every attempt, as read and as a redrive leaves it. */
export class DeliveryDto extends createZodDto(NotificationsCommands.getDelivery.response) {}
export class CallbackViewDto extends createZodDto(NotificationsCommands.inspectCallback.response) {}
export class CallbackResultDto extends createZodDto(NotificationsCommands.executeCallback.response) {}
