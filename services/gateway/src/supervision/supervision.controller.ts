import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { CommandBus } from '@packetagent/bus';
import { SupervisorCommands } from '@packetagent/contracts';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { EndRunDto, EndRunResultDto, ReleaseRunResultDto, RunSupervisionDto } from './supervision.dto';

/**
 * A run as the supervisor holds it, and the two ways out of a quarantine (a history the
 * supervisor could not replay); each forwards to the supervisor over NATS. A run that is not
 * quarantined answers 409, another workspace's run 404.
 */
@ApiTags('runs')
@Controller('api/v1/workspaces/:ws/runs/:runId')
export class SupervisionController {
  constructor(private readonly bus: CommandBus) {}

  @Get('supervision')
  @RequirePermission('inspect')
  @ApiOperation({ summary: "The supervisor's hold on the run: unclaimed, active, waiting, terminal or quarantined (with the reason)" })
  @ZodResponse({ status: 200, type: RunSupervisionDto })
  get(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string) {
    return this.bus.request(SupervisorCommands.getRun, { workspaceId: who.workspaceId, runId });
  }

  @Post('release')
  @HttpCode(200)
  @RequirePermission('run-recovery')
  @ApiOperation({ summary: 'Release a quarantined run: its history is replayed again; if it still cannot be, the run is quarantined again with the reason' })
  @ZodResponse({ status: 200, type: ReleaseRunResultDto })
  release(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string) {
    return this.bus.request(SupervisorCommands.releaseRun, { workspaceId: who.workspaceId, runId, actor: who.actor }, { timeoutMs: 10_000 });
  }

  @Post('end')
  @HttpCode(200)
  @RequirePermission('run-recovery')
  @ApiOperation({ summary: 'End a quarantined run as abandoned (cause quarantined), without replaying its history' })
  @ZodResponse({ status: 200, type: EndRunResultDto })
  end(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string, @Body() body: EndRunDto) {
    return this.bus.request(SupervisorCommands.endRun, { workspaceId: who.workspaceId, runId, actor: who.actor, reason: body.reason });
  }
}
