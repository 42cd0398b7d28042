import type { Channel, ChannelDelivery, ChannelOutcome } from '../channel';
import { parseSignedEndpoint, signedJsonRequest } from '../signed-post';

const URGENT: ReadonlySet<string> = new Set(['attention', 'reminder', 'escalation']);

export function packetPhoneBody(delivery: ChannelDelivery): string {
  const { message } = delivery;
  return JSON.stringify({
    deliveryId: message.deliveryId,
    recipient: delivery.route.to,
    priority: URGENT.has(message.trigger) ? 'high' : 'normal',
    kind: message.trigger,
    title: message.title,
    text: message.text,
    worker: message.worker,
    run: message.run,
    attention: message.attention,
    // Only what the recipient's role and the run's state allow, each a signed single-use link.
    controls: delivery.actions.map(({ action, label, url, expiresAt }) => ({ action, label, url, expiresAt })),
    occurredAt: message.occurredAt,
  });
}

/**
 * PacketPhone: one push per message to `<url>/v1/notifications`, over HTTPS only (a plain
 * http URL is refused, loopback included), carrying the controls the recipient may use. Signed
 * as Standard Webhooks with the credential's secret.
 */
export class PacketPhoneChannel implements Channel {
  readonly channel = 'packetphone' as const;

  constructor(private readonly clock: () => Date = () => new Date()) {}

  async send(delivery: ChannelDelivery): Promise<ChannelOutcome> {
    const endpoint = parseSignedEndpoint(delivery.credential, 'PacketPhone', { httpsOnly: true });
    if (!endpoint.ok) return { ok: false, retryable: false, status: null, code: 'credential_invalid', message: endpoint.message };
    if (!delivery.route.to) return { ok: false, retryable: false, status: null, code: 'route_invalid', message: 'the PacketPhone route names no recipient' };
    const base = endpoint.value.url.href.endsWith('/') ? endpoint.value.url.href : `${endpoint.value.url.href}/`;
    return signedJsonRequest(delivery, {
      endpoint: endpoint.value,
      url: new URL('v1/notifications', base),
      method: 'POST',
      body: packetPhoneBody(delivery),
      userAgent: 'packetagent-packetphone',
      now: this.clock(),
      clock: this.clock,
    });
  }
}
