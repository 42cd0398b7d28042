import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { DomainError, parseEnvelope, type EventEnvelope } from '@packetagent/contracts';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { PG_POOL, rowToEnvelope, type EventRow } from '@packetagent/eventstore';
import { LIVE_OPTIONS, type LiveOptions } from './live.options';
import { LiveSession, type LiveSource } from './live-session';
import { StreamSlots } from './stream-slots';
import { responseSink } from './response-sink';

/** A workspace already has as many open streams on this replica as it may. */
export class LiveStreamsRateLimitedError extends DomainError {
  readonly code = 'live_streams_rate_limited';
  readonly retryAfterSeconds = 5;
  constructor(limit: number) {
    super(`the workspace already has ${limit} open event streams here; close one or retry later`);
  }
}

export interface LiveScope {
  workspaceId: string;
  /** One stream (a run's), or null for every event of the workspace. */
  stream: string | null;
}

export interface LiveSubscription {
  subscription: Subscription;
  /** Hands the session every event received so far and from now on. */
  attach(session: LiveSession): void;
}

/** A connection slot, taken before the response starts so a refusal can still be a problem document. */
export interface LiveSlot {
  release(): void;
}

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // nginx buffers responses unless told not to, which would hold events back.
  'x-accel-buffering': 'no',
} as const;

/**
 * Serves SSE streams of stored events: subscribes to the workspace's subjects on NATS core
 * (the relay publishes every event there as it enters JetStream), replays the store from the
 * client's Last-Event-ID, then forwards live events. Counts open streams per workspace and
 * ends them all on shutdown, before the NATS connection drains.
 */
@Injectable()
export class LiveFeed implements BeforeApplicationShutdown {
  private readonly logger = new Logger('live');
  private readonly sessions = new Set<LiveSession>();
  private readonly slots: StreamSlots;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topology: Topology,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(LIVE_OPTIONS) private readonly options: LiveOptions,
  ) {
    this.slots = new StreamSlots(options.maxConnectionsPerWorkspace, (limit) => new LiveStreamsRateLimitedError(limit));
  }

  reserve(workspaceId: string): LiveSlot {
    return { release: this.slots.take(workspaceId) };
  }

  /** Subscribes and confirms the subscription with the server, so nothing published from here on is missed. */
  async subscribe(scope: LiveScope): Promise<LiveSubscription> {
    let target: LiveSession | null = null;
    const early: EventEnvelope[] = [];
    const category = scope.stream === null ? '>' : `${scope.stream.slice(0, scope.stream.indexOf('-'))}.>`;
    const subscription = this.nc.subscribe(`${this.topology.eventsSubjectRoot}.${scope.workspaceId}.${category}`, {
      callback: (error, message) => {
        if (error) {
          target?.close('error', 'the live subscription failed; reconnect with Last-Event-ID to resume', error);
          return;
        }
        const event = this.decode(message.string(), scope.workspaceId);
        if (!event) return;
        if (target) target.offer(event);
        else early.push(event);
      },
    });
    await this.nc.flush();
    return {
      subscription,
      attach: (session) => {
        target = session;
        for (const event of early.splice(0)) session.offer(event);
      },
    };
  }

  /**
   * Runs one SSE stream on `response` until the client leaves, falls behind, or the app stops.
   * Takes over the slot and the subscription, which `reserve` and `subscribe` gave before the
   * response started, while a refusal could still be answered as a problem document.
   */
  async serve(scope: LiveScope, lastEventId: number | null, response: ServerResponse, slot: LiveSlot, { subscription, attach }: LiveSubscription): Promise<void> {
    response.writeHead(200, SSE_HEADERS);
    response.flushHeaders();
    const session = new LiveSession(this.sourceFor(scope), responseSink(response), {
      heartbeatMs: this.options.heartbeatMs,
      bufferEvents: this.options.bufferEvents,
      catchUpPageSize: this.options.catchUpPageSize,
      replayFromStart: scope.stream !== null,
      matches: (event) => scope.stream === null || event.stream === scope.stream,
    }, (reason, error) => {
      subscription.unsubscribe();
      this.sessions.delete(session);
      slot.release();
      if (reason === 'error') this.logger.warn(`event stream of workspace ${scope.workspaceId} ended: ${error instanceof Error ? error.message : String(error)}`);
    });
    this.sessions.add(session);
    response.on('close', () => session.close('client_gone'));
    // The client may have left while the subscription was being set up.
    if (response.destroyed || !response.socket || response.socket.destroyed) session.close('client_gone');
    attach(session);
    await session.start(lastEventId);
  }

  async beforeApplicationShutdown(): Promise<void> {
    for (const session of [...this.sessions]) session.close('shutting_down', 'the server is stopping; reconnect with Last-Event-ID to resume');
  }

  private sourceFor(scope: LiveScope): LiveSource {
    return {
      settledPosition: async () => {
        const { rows } = await this.pool.query<{ position: string }>(`SELECT position FROM relay_cursors WHERE name = $1`, [this.options.relayName]);
        return Number(rows[0]?.position ?? 0);
      },
      read: async (after, upTo, limit) => {
        const { rows } = await this.pool.query<EventRow>(
          `SELECT * FROM events
            WHERE workspace_id = $1 AND ($2::text IS NULL OR stream_id = $2) AND global_position > $3 AND global_position <= $4
            ORDER BY global_position LIMIT $5`,
          [scope.workspaceId, scope.stream, after, upTo, limit],
        );
        return rows.map(rowToEnvelope);
      },
    };
  }

  /** The relay publishes envelopes as JSON; anything else on the subject is not ours to forward. */
  private decode(text: string, workspaceId: string): EventEnvelope | null {
    try {
      const event = parseEnvelope(JSON.parse(text));
      return event.workspaceId === workspaceId ? event : null;
    } catch {
      return null;
    }
  }
}
