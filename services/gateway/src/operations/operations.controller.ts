import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { CommandBus } from '@packetagent/bus';
import { ProjectorCommands } from '@packetagent/contracts';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { OverviewDto, RunSummaryDto } from './operations.dto';

/** Read models kept by the projector: eventually consistent with the event log, usually within a second. */
@ApiTags('operations')
@Controller('api/v1/workspaces/:ws')
export class OperationsController {
  constructor(private readonly bus: CommandBus) {}

  @Get('overview')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: OverviewDto })
  overview(@Principal() who: WorkspacePrincipal) {
    return this.bus.request(ProjectorCommands.overview, { workspaceId: who.workspaceId });
  }

  @Get('runs/:runId/summary')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: RunSummaryDto })
  runSummary(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string) {
    return this.bus.request(ProjectorCommands.runSummary, { workspaceId: who.workspaceId, runId });
  }
}
