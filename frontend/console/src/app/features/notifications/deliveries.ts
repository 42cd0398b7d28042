/**
 * Shapes of the gateway's notification outbox routes (DeliverySchema and NotificationsCommands in
 * libs/contracts notifications.commands.v1.ts, DeliveryRouteSchema and DeliveryAttemptSchema in
 * notifications.events.v1.ts), and what the Notifications page says about them.
 */
import type { Tone } from '../../shared/format';

export const DELIVERY_STATES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** NOTIFICATION_EVENTS and NOTIFICATION_CHANNELS of libs/contracts worker-definition/schema.ts; a newer server may send others. */
export type DeliveryTrigger = 'attention' | 'reminder' | 'escalation' | 'progress' | 'succeeded' | 'failed' | 'abandoned' | 'any_terminal' | 'budget_warning';
export type DeliveryChannel = 'webhook' | 'slack' | 'email' | 'packetchat' | 'packetphone';

export interface DeliveryRoute {
  /** The route's position in the pinned definition's `notifications` list. */
  index: number;
  name: string | null;
  channel: DeliveryChannel;
  credential: string | null;
  to: string | null;
  role: 'viewer' | 'member' | 'admin';
}

export interface DeliveryAttempt {
  at: string;
  /** Time since the previous attempt; null for the first. */
  afterMs: number | null;
  outcome: 'delivered' | 'failed';
  status: number | null;
  code: string | null;
  message: string | null;
}

export interface Delivery {
  deliveryId: string;
  workspaceId: string;
  idempotencyKey: string;
  trigger: DeliveryTrigger;
  route: DeliveryRoute;
  state: DeliveryState;
  runId: string | null;
  deploymentId: string | null;
  attentionId: string | null;
  sourceEventId: string;
  attempts: number;
  attemptLog: DeliveryAttempt[];
  nextAttemptAt: string | null;
  expiresAt: string;
  deliveredAt: string | null;
  lastError: { code: string; message: string } | null;
  createdAt: string;
}

/** GET …/notifications/deliveries: newest first; `next` is the `after` of the page older than this one. */
export interface DeliveryPage {
  items: Delivery[];
  next: string | null;
}

export interface DeliveryFilter {
  /** '' for every state. */
  state: DeliveryState | '';
  /** '' for every run. */
  runId: string;
}

export const PAGE_SIZE = 50;

/** The query of one page of the outbox under a filter, after the last delivery of the page before it. */
export function deliveriesQuery(filter: DeliveryFilter, after: string | null): string {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filter.state) params.set('state', filter.state);
  if (filter.runId.trim()) params.set('runId', filter.runId.trim());
  if (after) params.set('after', after);
  return params.toString();
}

/** A state from a query parameter, or every state when it is none the outbox knows. */
export function deliveryStateOf(value: string | null | undefined): DeliveryState | '' {
  return (DELIVERY_STATES as readonly string[]).includes(value ?? '') ? (value as DeliveryState) : '';
}

export function deliveryTone(state: string): Tone {
  if (state === 'delivered') return 'ok';
  if (state === 'dead') return 'bad';
  return state === 'pending' ? 'warn' : 'neutral';
}

/** A route by its name, or by its position in the definition (`#2`) when it has none. */
export function routeName(route: DeliveryRoute): string {
  return route.name ?? `#${route.index}`;
}

/** `slack ops → #releases`, or `webhook #2` for a route without a name or recipient. */
export function routeLabel(route: DeliveryRoute): string {
  return `${route.channel} ${routeName(route)}${route.to ? ` → ${route.to}` : ''}`;
}

/** `350 ms`, `1.2 s`, `4 min`, `2.5 h`: the wait before an attempt. */
export function waitText(ms: number | null): string {
  if (ms === null) return 'first attempt';
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** What happened to a delivery so far, with its time: the line under its state in the table. */
export function deliveryProgress(delivery: Delivery): { label: string; at: string | null } {
  switch (delivery.state) {
    case 'delivered':
      return { label: 'Delivered', at: delivery.deliveredAt };
    case 'dead':
      return { label: 'Gave up', at: delivery.attemptLog.at(-1)?.at ?? null };
    case 'pending':
      return delivery.nextAttemptAt ? { label: 'Next attempt', at: delivery.nextAttemptAt } : { label: 'Due', at: null };
    default:
      return { label: delivery.state, at: null };
  }
}

/** The page with one delivery replaced by the server's answer about it (a redrive), in place. */
export function withDelivery(page: DeliveryPage, updated: Delivery): DeliveryPage {
  return { ...page, items: page.items.map((item) => (item.deliveryId === updated.deliveryId ? updated : item)) };
}
