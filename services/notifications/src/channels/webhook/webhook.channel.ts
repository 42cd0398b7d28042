import type { Channel, ChannelDelivery, ChannelOutcome } from '../channel';
import { parseSignedEndpoint, signedJsonRequest } from '../signed-post';

/** The JSON body: `{type, timestamp, data}` as Standard Webhooks recommends. */
export function webhookBody(delivery: ChannelDelivery): string {
  const { message } = delivery;
  return JSON.stringify({
    type: `packetagent.${message.trigger}`,
    timestamp: message.occurredAt,
    data: {
      deliveryId: message.deliveryId,
      event: { id: message.source.eventId, type: message.source.type },
      workspaceId: message.workspaceId,
      worker: message.worker,
      run: message.run,
      attention: message.attention,
      budget: message.budget,
      title: message.title,
      text: message.text,
      actions: delivery.actions.map(({ action, label, url, expiresAt }) => ({ action, label, url, expiresAt })),
      consoleUrl: delivery.consoleUrl,
    },
  });
}

/** Standard Webhooks to the URL in the route's credential, signed with its `whsec_` secret. */
export class WebhookChannel implements Channel {
  readonly channel = 'webhook' as const;

  constructor(private readonly clock: () => Date = () => new Date()) {}

  async send(delivery: ChannelDelivery): Promise<ChannelOutcome> {
    const endpoint = parseSignedEndpoint(delivery.credential, 'webhook');
    if (!endpoint.ok) return { ok: false, retryable: false, status: null, code: 'credential_invalid', message: endpoint.message };
    if (delivery.route.to !== null && delivery.route.to !== endpoint.value.url.href) {
      return { ok: false, retryable: false, status: null, code: 'destination_mismatch', message: 'the webhook credential\'s url is not the route\'s "to"' };
    }
    return signedJsonRequest(delivery, {
      endpoint: endpoint.value,
      url: endpoint.value.url,
      method: 'POST',
      body: webhookBody(delivery),
      userAgent: 'packetagent-notifications',
      now: this.clock(),
      clock: this.clock,
    });
  }
}
