import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { Public, RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { ConsoleReads } from './console-reads';
import { runIdList, RunFactsDto, RunFactsQueryDto, RunTrendsDto, SetupStatusDto, TrendsQueryDto, WorkspaceDirectoryDto } from './console-reads.dto';

/** Names, run facts and trends from the read models: eventually consistent with the event log, usually within a second. */
@ApiTags('operations')
@Controller('api/v1/workspaces/:ws')
export class ConsoleReadsController {
  constructor(private readonly reads: ConsoleReads) {}

  /** Names of the workspace's workers, deployments, members and API keys, to show in place of their ids. */
  @Get('directory')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: WorkspaceDirectoryDto })
  directory(@Principal() who: WorkspacePrincipal) {
    return this.reads.directory(who.workspaceId);
  }

  /** Worker, cost and duration of the named runs (a page of the runs list); a run not yet projected is absent. */
  @Get('run-facts')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: RunFactsDto })
  runFacts(@Principal() who: WorkspacePrincipal, @Query() query: RunFactsQueryDto) {
    return this.reads.runFacts(who.workspaceId, runIdList(query.ids));
  }

  /** Runs started, succeeded and failed and model spend per hour (the last 24) or UTC day (the last 14). */
  @Get('trends')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: RunTrendsDto })
  trends(@Principal() who: WorkspacePrincipal, @Query() query: TrendsQueryDto) {
    return this.reads.trends(who.workspaceId, query.bucket);
  }
}

/** Whether first-run setup is done, so the console shows sign-in rather than a form that can only fail. */
@ApiTags('setup')
@Controller('api/v1/setup')
export class SetupStatusController {
  constructor(private readonly reads: ConsoleReads) {}

  @Get('status')
  @Public()
  @ZodResponse({ status: 200, type: SetupStatusDto })
  async status() {
    return { complete: await this.reads.setupComplete() };
  }
}
