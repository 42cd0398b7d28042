import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { NotificationsCommands, type CallbackView, type DeliveryView } from '@packetagent/contracts';
import type { z } from 'zod';
import { UseCallback } from './callbacks/use-callback';
import { Deliveries } from './outbox/read-deliveries';

type Req<K extends keyof typeof NotificationsCommands> = z.output<(typeof NotificationsCommands)[K]['request']>;
type Res<K extends keyof typeof NotificationsCommands> = z.input<(typeof NotificationsCommands)[K]['response']>;

/** `notifications.*` over NATS request/reply, served by every replica. */
@Injectable()
export class NotificationsCommandsHandler {
  constructor(
    private readonly deliveries: Deliveries,
    private readonly callbacks: UseCallback,
  ) {}

  @OnCommand(NotificationsCommands.listDeliveries)
  list(request: Req<'listDeliveries'>): Promise<{ items: DeliveryView[]; next: string | null }> {
    return this.deliveries.list(request);
  }

  @OnCommand(NotificationsCommands.getDelivery)
  get(request: Req<'getDelivery'>): Promise<DeliveryView> {
    return this.deliveries.get(request.workspaceId, request.deliveryId);
  }

  @OnCommand(NotificationsCommands.redrive)
  redrive(request: Req<'redrive'>): Promise<DeliveryView> {
    return this.deliveries.redrive(request);
  }

  @OnCommand(NotificationsCommands.inspectCallback)
  inspect(request: Req<'inspectCallback'>): Promise<CallbackView> {
    return this.callbacks.inspect(request.token);
  }

  @OnCommand(NotificationsCommands.executeCallback)
  execute(request: Req<'executeCallback'>): Promise<Res<'executeCallback'>> {
    return this.callbacks.execute(request);
  }
}
