import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { IntakeCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { RunsQueryDto, StopRunDto } from './control-plane.dto';
import { RunDto, RunPageDto } from './control-plane-replies.dto';

@ApiTags('runs')
@Controller('api/v1/workspaces/:ws/runs')
export class RunsController {
  constructor(private readonly bus: CommandBus) {}

  @Get()
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: RunPageDto })
  list(
    @Principal() who: WorkspacePrincipal,
    @Query() query: RunsQueryDto,
  ) {
    return this.bus.request(IntakeCommands.listRuns, {
      workspaceId: who.workspaceId,
      deploymentId: query.deploymentId ?? null,
      state: query.state ?? null,
      cursor: query.cursor ?? null,
      limit: query.limit,
    });
  }

  @Get(':runId')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: RunDto })
  get(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string) {
    return this.bus.request(IntakeCommands.getRun, { workspaceId: who.workspaceId, runId });
  }

  /** A run that has not started is cancelled at once; a running one records the request for the supervisor. */
  @Post(':runId/stop')
  @HttpCode(200)
  @RequirePermission('run-control')
  @ZodResponse({ status: 200, type: RunDto })
  stop(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string, @Body() body: StopRunDto) {
    return this.bus.request(IntakeCommands.stopRun, { workspaceId: who.workspaceId, actor: who.actor, runId, reason: body.reason ?? null });
  }

  /** Recorded for the supervisor, which pauses the run between steps (and aborts an in-flight call). */
  @Post(':runId/pause')
  @HttpCode(200)
  @RequirePermission('run-control')
  @ZodResponse({ status: 200, type: RunDto })
  pause(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string, @Body() body: StopRunDto) {
    return this.bus.request(IntakeCommands.pauseRun, { workspaceId: who.workspaceId, actor: who.actor, runId, reason: body.reason ?? null });
  }

  @Post(':runId/resume')
  @HttpCode(200)
  @RequirePermission('run-control')
  @ZodResponse({ status: 200, type: RunDto })
  resume(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string) {
    return this.bus.request(IntakeCommands.resumeRun, { workspaceId: who.workspaceId, actor: who.actor, runId });
  }
}
