import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import {
  registerBudgetEvents,
  registerIntakeEvents,
  registerNotificationEvents,
  registerPolicyEvents,
  registerRunExecutionEvents,
  type EventRegistry,
} from '@packetagent/contracts';
import { CallbackTargets } from './callbacks/callback-targets';
import { CallbackTokens } from './callbacks/callback-tokens';
import { UseCallback } from './callbacks/use-callback';
import { CHANNELS, type Channel } from './channels/channel';
import { EmailChannel } from './channels/email/email.channel';
import { PacketChatChannel } from './channels/packetchat/packetchat.channel';
import { PacketPhoneChannel } from './channels/packetphone/packetphone.channel';
import { SlackChannel } from './channels/slack/slack.channel';
import { WebhookChannel } from './channels/webhook/webhook.channel';
import { NotificationsCommandsHandler } from './notifications-commands.handler';
import { NOTIFICATIONS_OPTIONS, resolveNotificationsOptions, type NotificationsModuleOptions, type ResolvedNotificationsOptions } from './notifications.options';
import { DeliveryWorker } from './outbox/delivery-worker';
import { DeliveryDoorbell } from './outbox/doorbell';
import { QueueDeliveries } from './outbox/queue-deliveries';
import { Deliveries } from './outbox/read-deliveries';
import { RouteCredentials } from './outbox/route-credentials';
import { SendDelivery } from './outbox/send-delivery';
import { NotificationSourcesConsumer } from './sources/notification-sources.consumer';
import { RunContexts } from './sources/run-context';

const NOTIFICATION_EVENT_SCHEMAS = Symbol('NOTIFICATION_EVENT_SCHEMAS');

/** Every channel this build sends through. */
function channels(options: ResolvedNotificationsOptions): Channel[] {
  return [new WebhookChannel(options.clock), new SlackChannel({ clock: options.clock }), new EmailChannel(), new PacketChatChannel(options.clock), new PacketPhoneChannel(options.clock)];
}

/**
 * Notifications: the durable outbox (queued from events, delivered under leases with backoff,
 * expiry, dead-letter and redrive), the channels, and single-use remote controls. Needs the
 * global providers of BusModule and EventStoreModule.
 */
@Module({})
export class NotificationsModule {
  static forRoot(options: NotificationsModuleOptions): DynamicModule {
    const resolved = resolveNotificationsOptions(options);
    const providers: Provider[] = [
      { provide: NOTIFICATIONS_OPTIONS, useValue: resolved },
      {
        // The events it consumes and appends must decode and validate in this process.
        provide: NOTIFICATION_EVENT_SCHEMAS,
        useFactory: (registry: EventRegistry) => registerNotificationEvents(registerBudgetEvents(registerPolicyEvents(registerRunExecutionEvents(registerIntakeEvents(registry))))),
        inject: [EVENT_REGISTRY],
      },
      { provide: CallbackTokens, useValue: new CallbackTokens(resolved.callbackSigningKey) },
      { provide: CHANNELS, useValue: channels(resolved) },
      RunContexts,
      DeliveryDoorbell,
      QueueDeliveries,
      RouteCredentials,
      SendDelivery,
      DeliveryWorker,
      Deliveries,
      CallbackTargets,
      UseCallback,
      NotificationSourcesConsumer,
      NotificationsCommandsHandler,
    ];
    return { module: NotificationsModule, providers, exports: [DeliveryWorker] };
  }
}
