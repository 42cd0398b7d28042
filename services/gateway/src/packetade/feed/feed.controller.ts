import { Body, Controller, Get, Headers, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply } from 'fastify';
import { ValidationError } from '@packetagent/contracts';
import { ActorTokenOnly } from '../../access/access.decorators';
import type { ActorPrincipal } from '../actors/actor-principal';
import { ActorCalls } from '../door/actor-calls';
import { CallingActor } from '../door/calling-actor';
import { SSE_HEADERS } from '../../live/live-feed';
import { FeedAcknowledgements, type AcknowledgedCursor } from './acknowledgements';
import { ActorFeed } from './actor-feed';
import { formatFeedCursor, parseFeedCursor } from './feed-cursor';
import { AcknowledgeDto, AcknowledgedDto, FeedPageDto, FeedPageQueryDto, FeedStreamQueryDto } from './feed.dto';
import { sseFeedSink } from './sse-feed-sink';

const ETAG = /^(?:W\/)?"(\d{1,15})"$/;

/**
 * The actor's feed: the events of its deployments and of their runs and approvals. Pages,
 * an SSE stream, and the acknowledged cursor a reconnecting client resumes after.
 */
@ApiTags('packetade')
@Controller('api/v1/packetade/events')
export class PacketAdeFeedController {
  constructor(
    private readonly feed: ActorFeed,
    private readonly acknowledgements: FeedAcknowledgements,
    private readonly calls: ActorCalls,
  ) {}

  @Get()
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: FeedPageDto })
  page(@CallingActor() who: ActorPrincipal, @Query() query: FeedPageQueryDto) {
    return this.calls.run(who, 'events', 'rest', {}, async () => {
      const after = query.after === undefined ? (await this.acknowledgements.current(who.workspaceId, who.actorName)).position : parseFeedCursor(query.after, 'after');
      const page = await this.feed.page(who, after, query.limit);
      return { items: page.items, nextCursor: formatFeedCursor(page.nextCursor), caughtUp: page.caughtUp };
    });
  }

  /** Events after Last-Event-ID (or `after`, or the acknowledged cursor), then live. */
  @Get('stream')
  @ActorTokenOnly()
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'last-event-id', required: false, description: 'resume after this cursor' })
  @ApiOkResponse({
    description: 'SSE: `id: <cursor>`, `event: <type>`, `data: <envelope>`; `: heartbeat` comments; a last `closing` event with the reason and the cursor to resume from',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  async stream(
    @CallingActor() who: ActorPrincipal,
    @Query() query: FeedStreamQueryDto,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const opened = await this.calls.run(who, 'events', 'rest', {}, async () => {
      const given = lastEventId ?? query.after;
      const after = given === undefined ? (await this.acknowledgements.current(who.workspaceId, who.actorName)).position : parseFeedCursor(given, lastEventId !== undefined ? 'last-event-id' : 'after');
      return { after, release: this.feed.reserve(who.workspaceId) };
    });
    reply.hijack();
    const response = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    response.writeHead(200, SSE_HEADERS);
    response.flushHeaders();
    response.write('retry: 2000\n: connected\n\n');
    const session = await this.feed.follow(who, opened.after, sseFeedSink(response), opened.release);
    response.on('close', () => session.close('client_gone'));
    if (response.destroyed) session.close('client_gone');
  }

  @Get('ack')
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: AcknowledgedDto })
  async acknowledged(@CallingActor() who: ActorPrincipal, @Res({ passthrough: true }) reply: FastifyReply) {
    const current = await this.calls.run(who, 'events', 'rest', {}, () => this.acknowledgements.current(who.workspaceId, who.actorName));
    return answer(current, reply);
  }

  /**
   * Moves the acknowledged cursor forward. The same cursor again changes nothing; an earlier one
   * is refused (409 cursor_regression); with If-Match (the ETag of GET .../ack) it applies only
   * at that revision (412 otherwise).
   */
  @Post('ack')
  @HttpCode(200)
  @ActorTokenOnly()
  @ApiHeader({ name: 'if-match', required: false, description: 'the revision (ETag) the client last saw' })
  @ZodResponse({ status: 200, type: AcknowledgedDto })
  async acknowledge(
    @CallingActor() who: ActorPrincipal,
    @Body() body: AcknowledgeDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const current = await this.calls.run(who, 'events', 'rest', {}, () =>
      this.acknowledgements.acknowledge(who.workspaceId, who.actorName, parseFeedCursor(body.cursor, 'cursor'), revisionOf(ifMatch)),
    );
    return answer(current, reply);
  }
}

function answer(current: AcknowledgedCursor, reply: FastifyReply) {
  reply.header('etag', `"${current.revision}"`);
  return { cursor: formatFeedCursor(current.position), revision: current.revision };
}

function revisionOf(ifMatch: string | undefined): number | null {
  if (ifMatch === undefined) return null;
  const match = ETAG.exec(ifMatch.trim());
  if (!match) throw new ValidationError('invalid If-Match', [{ path: 'if-match', message: 'the ETag of GET /api/v1/packetade/events/ack, e.g. "3"' }]);
  return Number(match[1]);
}
