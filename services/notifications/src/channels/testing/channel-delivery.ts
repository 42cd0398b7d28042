import type { DeliveryRoute } from '@packetagent/contracts';
import type { ChannelDelivery, MessageAction, OutboundMessage } from '../channel';

/** An approval request for run `run-42` of worker `release-bot`, as the outbox would build it. */
export function outboundMessage(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    deliveryId: 'dlv-0001',
    trigger: 'attention',
    workspaceId: 'ws_test',
    occurredAt: '2025-06-01T12:00:00.000Z',
    source: { eventId: 'evt-0001', type: 'attention.raised' },
    worker: { name: 'release-bot', deploymentId: 'dep-1', versionDigest: 'sha256:abc' },
    run: { id: 'run-42', state: 'waiting', reason: null },
    attention: { id: 'att-7', kind: 'approval', tool: 'http_fetch', verb: 'POST', resource: 'https://api.example.com/deploy', deadline: '2025-06-01T14:00:00.000Z' },
    budget: null,
    title: 'release-bot asks to POST https://api.example.com/deploy',
    text: 'Tool: http_fetch\nResource: https://api.example.com/deploy\nDecide by 2025-06-01 14:00 UTC',
    ...overrides,
  };
}

export function messageActions(): MessageAction[] {
  return [
    { action: 'approve', label: 'Approve', url: 'https://console.example.com/r/cb-approve?t=token-a', expiresAt: '2025-06-01T14:00:00.000Z' },
    { action: 'reject', label: 'Reject', url: 'https://console.example.com/r/cb-reject?t=token-b', expiresAt: '2025-06-01T14:00:00.000Z' },
  ];
}

/** A delivery for `route`, with the message and actions above unless overridden. */
export function channelDelivery(route: Partial<DeliveryRoute> & Pick<DeliveryRoute, 'channel'>, overrides: Partial<ChannelDelivery> = {}): ChannelDelivery {
  return {
    message: outboundMessage(),
    actions: messageActions(),
    consoleUrl: 'https://console.example.com/runs/run-42',
    route: { index: 0, name: null, credential: 'route_credential', to: null, role: 'member', ...route },
    credential: null,
    thread: null,
    allowPrivate: [],
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}
