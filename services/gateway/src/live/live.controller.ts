import { Controller, Get, Headers, Inject, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply } from 'fastify';
import type { Pool } from 'pg';
import { ValidationError } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { assertRunInWorkspace } from '../audit/run-streams';
import { LiveFeed, type LiveScope } from './live-feed';
import { LAST_EVENT_ID_PATTERN, LiveStreamQueryDto, RunEventsPageDto, RunEventsQueryDto } from './live.dto';
import { PageRunEvents } from './usecases/page-run-events.usecase';

const SSE_DESCRIPTION =
  'Server-sent events: `id: <global position>`, `event: <type>`, `data: <event envelope JSON>`; a `: heartbeat` comment every 15 s; ' +
  'a last `closing` event says why the server ended the stream (slow_consumer, shutting_down, error). Resume with Last-Event-ID.';

const lastEventIdHeader = ApiHeader({ name: 'last-event-id', required: false, description: 'resume after this global position' });
const sseAnswer = ApiOkResponse({ description: SSE_DESCRIPTION, content: { 'text/event-stream': { schema: { type: 'string' } } } });

@ApiTags('events')
@Controller('api/v1/workspaces/:ws')
export class LiveController {
  constructor(
    private readonly feed: LiveFeed,
    private readonly pageRunEvents: PageRunEvents,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  /**
   * The run's events in order; `nextCursor` is null once the page reached the last event stored.
   * Payload references are replaced by their verified content (`payloads=inline`, up to 8 MiB a
   * page) or left as stored (`payloads=ref`); `payloads` on an item says what became of each.
   */
  @Get('runs/:runId/events')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: RunEventsPageDto })
  page(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string, @Query() query: RunEventsQueryDto) {
    return this.pageRunEvents.execute({ workspaceId: who.workspaceId, runId, after: query.after, limit: query.limit, payloads: query.payloads });
  }

  /** The run's events from the first (or after Last-Event-ID), then live. */
  @Get('runs/:runId/events/stream')
  @RequirePermission('inspect')
  @ApiProduces('text/event-stream')
  @lastEventIdHeader
  @sseAnswer
  async runStream(
    @Principal() who: WorkspacePrincipal,
    @Param('runId') runId: string,
    @Query() query: LiveStreamQueryDto,
    @Headers('last-event-id') header: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const stream = await assertRunInWorkspace(this.pool, who.workspaceId, runId);
    await this.serve({ workspaceId: who.workspaceId, stream }, header ?? query.lastEventId, reply);
  }

  /** Every event of the workspace from now on (or after Last-Event-ID). */
  @Get('events/stream')
  @RequirePermission('inspect')
  @ApiProduces('text/event-stream')
  @lastEventIdHeader
  @sseAnswer
  async workspaceStream(
    @Principal() who: WorkspacePrincipal,
    @Query() query: LiveStreamQueryDto,
    @Headers('last-event-id') header: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.serve({ workspaceId: who.workspaceId, stream: null }, header ?? query.lastEventId, reply);
  }

  private async serve(scope: LiveScope, lastEventId: string | undefined, reply: FastifyReply): Promise<void> {
    if (lastEventId !== undefined && !LAST_EVENT_ID_PATTERN.test(lastEventId)) {
      throw new ValidationError('invalid Last-Event-ID', [{ path: 'last-event-id', message: 'a global position (digits)' }]);
    }
    const slot = this.feed.reserve(scope.workspaceId);
    const subscribed = await this.feed.subscribe(scope).catch((error: unknown) => {
      slot.release();
      throw error;
    });
    // From here the response is written directly; Fastify's own reply is set aside.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    await this.feed.serve(scope, lastEventId === undefined ? null : Number(lastEventId), reply.raw, slot, subscribed);
  }
}
