export { NotificationsModule } from './notifications.module';
export { resolveNotificationsOptions, NOTIFICATIONS_OPTIONS, type NotificationsModuleOptions, type ResolvedNotificationsOptions } from './notifications.options';
export { DeliveryWorker } from './outbox/delivery-worker';
export { CallbackTokens } from './callbacks/callback-tokens';
export type { Channel, ChannelDelivery, ChannelOutcome, MessageAction, OutboundMessage } from './channels/channel';
