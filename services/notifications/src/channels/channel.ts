import type { DeliveryRoute, NotificationChannel as ChannelName, NotificationTrigger, RemoteAction } from '@packetagent/contracts';

/** What an attention asks, from its `attention.requested`. */
export interface AttentionFacts {
  id: string;
  /** `approval`, `budget_request`, `ask_owner`, `uncertain_effect`, ... */
  kind: string;
  tool: string;
  verb: string;
  resource: string | null;
  deadline: string;
}

/**
 * What a notification says, whatever the channel: built from the source event and the pinned
 * definition when the delivery is queued, stored with it, and identical on every attempt.
 * It names things; it never carries a credential or a callback token (links are derived when
 * the message is sent).
 */
export interface OutboundMessage {
  /** The delivery id: Standard Webhooks' `webhook-id`, stable across every attempt. */
  deliveryId: string;
  trigger: NotificationTrigger;
  workspaceId: string;
  /** When the source event was committed. */
  occurredAt: string;
  source: { eventId: string; type: string };
  worker: { name: string; deploymentId: string | null; versionDigest: string | null };
  run: { id: string; state: string | null; reason: string | null } | null;
  attention: AttentionFacts | null;
  budget: { scope: string; unit: string; limit: number; spent: number; held: number; thresholdPercent: number } | null;
  /** One line: what happened, for a subject, a card title or a push notification. */
  title: string;
  /** A few plain-text lines with the facts a person decides on. */
  text: string;
}

/** A remote control offered in the message, with its signed single-use link. */
export interface MessageAction {
  action: RemoteAction;
  label: string;
  url: string;
  expiresAt: string;
}

export interface ChannelDelivery {
  message: OutboundMessage;
  actions: readonly MessageAction[];
  /** Read-only link to the run (or attention) in the console, when a public URL is configured. */
  consoleUrl: string | null;
  route: DeliveryRoute;
  /** The route credential's value, resolved from the vault for this attempt only; null when the route names none. */
  credential: string | null;
  /**
   * The message this route posted for the same run before (a Slack `channel:ts`, a PacketChat
   * message id), so progress is edited in place; null for the first one.
   */
  thread: { ref: string } | null;
  /** Private `host:port` destinations the operator allowed (PACKETAGENT_HTTP_ALLOW_PRIVATE). */
  allowPrivate: readonly string[];
  timeoutMs: number;
  signal: AbortSignal;
}

export type ChannelOutcome =
  | {
      ok: true;
      /** The receiver's HTTP status (null where the protocol has none, as SMTP). */
      status: number | null;
      /** What a later message of the same run should edit (see ChannelDelivery.thread). */
      threadRef?: string;
    }
  | {
      ok: false;
      /** False when another attempt cannot succeed (a refused credential, a 4xx other than 408/429): dead-letter now. */
      retryable: boolean;
      status: number | null;
      code: string;
      /** Never quotes a credential or a URL taken from one. */
      message: string;
      /** The receiver's Retry-After, in milliseconds, when it sent one. */
      retryAfterMs?: number;
    };

/** One way of reaching people. Implementations are stateless; the outbox owns retries. */
export interface Channel {
  readonly channel: ChannelName;
  send(delivery: ChannelDelivery): Promise<ChannelOutcome>;
}

/** Nest token for the list of channels the delivery worker may use. */
export const CHANNELS = Symbol('NOTIFICATION_CHANNELS');
