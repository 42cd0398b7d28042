import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { EventEnvelope } from '@packetagent/contracts';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { LiveStreamsRateLimitedError } from '../../live/live-feed';
import { LIVE_OPTIONS, type LiveOptions } from '../../live/live.options';
import { StreamSlots } from '../../live/stream-slots';
import type { ActorPrincipal } from '../actors/actor-principal';
import { FeedStore } from './feed-store';
import { FeedSession, type FeedSink } from './feed-session';

export interface FeedPage {
  items: EventEnvelope[];
  /** Where the next page starts: the last item's position, or the settled position the page reached. */
  nextCursor: number;
  /** True when the page reached the settled position: wait (or follow the stream) for more. */
  caughtUp: boolean;
}

/**
 * The event feed of PacketADE actors: pages, and live sessions (SSE and gRPC WatchEvents) woken
 * by the workspace's live events. Counts open sessions per workspace with the live streams'
 * limit and ends them all on shutdown, before the NATS connection drains.
 */
@Injectable()
export class ActorFeed implements BeforeApplicationShutdown {
  private readonly logger = new Logger('packetade-feed');
  private readonly sessions = new Set<FeedSession>();
  private readonly slots: StreamSlots;

  constructor(
    private readonly store: FeedStore,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topology: Topology,
    @Inject(LIVE_OPTIONS) private readonly options: LiveOptions,
  ) {
    this.slots = new StreamSlots(options.maxConnectionsPerWorkspace, (limit) => new LiveStreamsRateLimitedError(limit));
  }

  async page(who: ActorPrincipal, after: number, limit: number): Promise<FeedPage> {
    const settled = await this.store.settledPosition();
    const upTo = Math.max(settled, after);
    const items = await this.store.read(who.workspaceId, who.actorName, after, upTo, limit);
    const caughtUp = items.length < limit;
    return { items, nextCursor: caughtUp ? upTo : items[items.length - 1]!.globalPosition, caughtUp };
  }

  /** Refuses (429) before anything is written when the workspace has as many sessions open here as it may. */
  reserve(workspaceId: string): () => void {
    return this.slots.take(workspaceId);
  }

  /**
   * Follows the actor's feed after `after` until the client leaves or the server stops. The
   * subscription is confirmed before the first read, so no wake-up is missed in between.
   */
  async follow(who: ActorPrincipal, after: number, sink: FeedSink, release: () => void): Promise<FeedSession> {
    let session: FeedSession | null = null;
    // Only the categories the feed holds wake a session: the door's own call records, and the
    // rest of the workspace's traffic, do not.
    const subscriptions = FEED_CATEGORIES.map((category) =>
      this.nc.subscribe(`${this.topology.eventsSubjectRoot}.${who.workspaceId}.${category}.>`, {
        callback: (error, message) => {
          if (error) {
            session?.close('error', 'the live subscription failed; reconnect from your last cursor');
            return;
          }
          const position = positionOf(message.string());
          if (position !== null) session?.wake(position);
        },
      }),
    );
    const unsubscribe = () => subscriptions.forEach((subscription) => subscription.unsubscribe());
    try {
      await this.nc.flush();
    } catch (error) {
      unsubscribe();
      release();
      throw error;
    }
    session = new FeedSession(
      { settledPosition: () => this.store.settledPosition(), read: (from, upTo, limit) => this.store.read(who.workspaceId, who.actorName, from, upTo, limit) },
      sink,
      { pageSize: this.options.catchUpPageSize, heartbeatMs: this.options.heartbeatMs },
      () => {
        unsubscribe();
        this.sessions.delete(session!);
        release();
      },
    );
    this.sessions.add(session);
    await session.start(after);
    return session;
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const session of [...this.sessions]) session.close('shutting_down', 'the server is stopping; reconnect from your last cursor');
    if (this.sessions.size > 0) this.logger.warn(`${this.sessions.size} feed sessions did not close`);
  }
}

/** The stream categories of the feed (FeedStore.read): deployments, runs, approvals. */
const FEED_CATEGORIES = ['deployment', 'run', 'attention'] as const;

/** The relay publishes envelopes as JSON; only the top-level position matters here (a pattern over the text could match inside event data). */
function positionOf(text: string): number | null {
  try {
    const position = (JSON.parse(text) as { globalPosition?: unknown }).globalPosition;
    return typeof position === 'number' && Number.isSafeInteger(position) && position > 0 ? position : null;
  } catch {
    return null;
  }
}
