import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { SandboxCommands, type ExecLiveMessage, type ExecRecord } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { SSE_HEADERS } from '../live/live-feed';
import { responseSink } from '../live/response-sink';
import { StreamSlots } from '../live/stream-slots';
import { ExecLiveFeed } from './exec-live-feed';
import { ExecStreamSession } from './exec-stream-session';
import { SANDBOX_ROUTES_OPTIONS, type SandboxRoutesOptions } from './sandbox-routes.options';
import { ExecStreamsRateLimitedError } from './sandbox.errors';

/**
 * SSE streams of execs: subscribes to the exec's live subject before reading its record, so
 * nothing published after the read is missed, then hands both to an ExecStreamSession. Counts
 * open streams per workspace and ends them all on shutdown, before the NATS connection drains.
 */
@Injectable()
export class ExecStreams implements BeforeApplicationShutdown {
  private readonly sessions = new Set<ExecStreamSession>();
  private readonly slots: StreamSlots;

  constructor(
    private readonly bus: CommandBus,
    private readonly live: ExecLiveFeed,
    @Inject(SANDBOX_ROUTES_OPTIONS) private readonly options: SandboxRoutesOptions,
  ) {
    this.slots = new StreamSlots(options.maxStreamsPerWorkspace, (limit) => new ExecStreamsRateLimitedError(limit));
  }

  /**
   * Answers the stream on `reply`. Until the response starts, a refusal (no such exec, too many
   * streams, the sandbox not answering) is thrown, so it leaves as a problem document.
   */
  async serve(workspaceId: string, execId: string, reply: FastifyReply): Promise<void> {
    const release = this.reserve(workspaceId);
    let session: ExecStreamSession | null = null;
    const early: ExecLiveMessage[] = [];
    let subscription: { close(): void } | null = null;
    const read = () => this.bus.request(SandboxCommands.get, { workspaceId, execId });
    let record: ExecRecord;
    try {
      subscription = await this.live.subscribe(workspaceId, execId, (message) => (session ? session.offer(message) : early.push(message)));
      record = await read();
    } catch (error) {
      subscription?.close();
      release();
      throw error;
    }

    // From here the response is written directly; Fastify's own reply is set aside.
    reply.hijack();
    const response = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    response.writeHead(200, SSE_HEADERS);
    response.flushHeaders();
    const opened = new ExecStreamSession(responseSink(response), { heartbeatMs: this.options.heartbeatMs, reread: () => read().catch(() => null) }, () => {
      subscription?.close();
      this.sessions.delete(opened);
      release();
    });
    session = opened;
    this.sessions.add(opened);
    response.on('close', () => opened.close('client_gone'));
    // The client may have left while the subscription was being set up.
    if (response.destroyed || !response.socket || response.socket.destroyed) opened.close('client_gone');
    opened.start(record, early.splice(0));
  }

  beforeApplicationShutdown(): void {
    for (const session of [...this.sessions]) session.close('shutting_down', 'the server is stopping; the exec goes on: reconnect to follow it');
  }

  private reserve(workspaceId: string): () => void {
    return this.slots.take(workspaceId);
  }
}
