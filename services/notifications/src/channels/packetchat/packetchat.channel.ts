import type { Channel, ChannelDelivery, ChannelOutcome } from '../channel';
import { parseSignedEndpoint, signedJsonRequest } from '../signed-post';
import { THREADED_TRIGGERS } from '../threaded-triggers';

const PROGRESS_CARD = THREADED_TRIGGERS;

/**
 * The key of the message a delivery writes in the thread: a run's progress and its outcome
 * share one (each replaces the last), an attention has one per request, reminder and
 * escalation; anything else is its own message.
 */
export function packetChatMessageKey(delivery: ChannelDelivery): string {
  const { message } = delivery;
  if (message.run && PROGRESS_CARD.has(message.trigger)) return `run-${message.run.id}`;
  if (message.attention) return `attention-${message.attention.id}-${message.trigger}`;
  return `delivery-${message.deliveryId}`;
}

export function packetChatCard(delivery: ChannelDelivery): string {
  const { message } = delivery;
  return JSON.stringify({
    deliveryId: message.deliveryId,
    kind: message.trigger,
    replaceable: PROGRESS_CARD.has(message.trigger),
    card: {
      title: message.title,
      text: message.text,
      worker: message.worker,
      run: message.run,
      attention: message.attention,
      budget: message.budget,
      occurredAt: message.occurredAt,
    },
    // Read-only: PacketChat opens these to show the run as it is now; answers happen elsewhere.
    links: delivery.actions.filter((action) => action.action === 'open').map(({ action, label, url, expiresAt }) => ({ action, label, url, expiresAt })),
  });
}

/**
 * PacketChat: a threaded card per message, written with PUT at a key of the thread named by
 * the route's `to` (`<url>/threads/<to>/messages/<key>`), so a run's progress is one message
 * replaced in place and a repeated attempt writes the same message again. Signed as Standard
 * Webhooks with the credential's secret.
 */
export class PacketChatChannel implements Channel {
  readonly channel = 'packetchat' as const;

  constructor(private readonly clock: () => Date = () => new Date()) {}

  async send(delivery: ChannelDelivery): Promise<ChannelOutcome> {
    const endpoint = parseSignedEndpoint(delivery.credential, 'PacketChat');
    if (!endpoint.ok) return { ok: false, retryable: false, status: null, code: 'credential_invalid', message: endpoint.message };
    if (!delivery.route.to) return { ok: false, retryable: false, status: null, code: 'route_invalid', message: 'the PacketChat route names no thread' };
    const key = packetChatMessageKey(delivery);
    const base = endpoint.value.url.href.endsWith('/') ? endpoint.value.url.href : `${endpoint.value.url.href}/`;
    const url = new URL(`threads/${encodeURIComponent(delivery.route.to)}/messages/${encodeURIComponent(key)}`, base);
    const outcome = await signedJsonRequest(delivery, { endpoint: endpoint.value, url, method: 'PUT', body: packetChatCard(delivery), userAgent: 'packetagent-packetchat', now: this.clock(), clock: this.clock });
    return outcome.ok ? { ...outcome, threadRef: key } : outcome;
  }
}
