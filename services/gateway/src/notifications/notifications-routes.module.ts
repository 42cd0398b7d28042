import { Module } from '@nestjs/common';
import { CallbacksController } from './callbacks.controller';
import { DeliveriesController } from './deliveries.controller';

/** The notification outbox (`.../notifications/deliveries`) and remote-control links (`/api/v1/callbacks/{token}`), forwarded to the notifications service. */
@Module({ controllers: [DeliveriesController, CallbacksController] })
export class NotificationsRoutesModule {}
