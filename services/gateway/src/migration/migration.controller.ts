import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { CommandBus } from '@packetagent/bus';
import { MigrationCommands } from '@packetagent/contracts';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { DeploymentMigrationResultDto, MigrateDeploymentRunsDto, MigrateRunDto, RunMigrationResultDto } from './migration.dto';

// The supervisor replays each run's history under both versions before it answers; the CLI
// gives up on an answer after 30 s, so both stay below that.
const MIGRATE_RUN_TIMEOUT_MS = 15_000;
const MIGRATE_DEPLOYMENT_RUNS_TIMEOUT_MS = 25_000;

/*
 * Moving waiting runs to the version their deployment pins now, forwarded to the supervisor over
 * NATS. Both take `deployment-control`, like rolling the deployment itself: they change which
 * version a deployment's runs execute. A comparison that finds a different decision is an answer
 * (200, outcome `refused`, with the divergence), not an error.
 */

@ApiTags('runs')
@Controller('api/v1/workspaces/:ws/runs/:runId')
export class RunMigrationController {
  constructor(private readonly bus: CommandBus) {}

  @Post('migrate')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ApiOperation({
    summary:
      "Move a waiting run to its deployment's current version: its history is replayed under both versions and it moves only if every decision is the same (dryRun compares without moving). 404 unknown run; 409 not waiting, not the deployed version, or being driven",
  })
  @ZodResponse({ status: 200, type: RunMigrationResultDto })
  migrate(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string, @Body() body: MigrateRunDto) {
    return this.bus.request(
      MigrationCommands.migrateRun,
      { workspaceId: who.workspaceId, runId, version: body.version, dryRun: body.dryRun, actor: who.actor },
      { timeoutMs: MIGRATE_RUN_TIMEOUT_MS },
    );
  }
}

@ApiTags('deployments')
@Controller('api/v1/workspaces/:ws/deployments/:deploymentId')
export class DeploymentMigrationController {
  constructor(private readonly bus: CommandBus) {}

  @Post('migrate-runs')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ApiOperation({
    summary: "Compare (the default) or move every waiting run of a deployment to its current version, each run on its own: one result per run. 409 when the version is not the deployed one",
  })
  @ZodResponse({ status: 200, type: DeploymentMigrationResultDto })
  migrateRuns(@Principal() who: WorkspacePrincipal, @Param('deploymentId') deploymentId: string, @Body() body: MigrateDeploymentRunsDto) {
    return this.bus.request(
      MigrationCommands.migrateDeploymentRuns,
      { workspaceId: who.workspaceId, deploymentId, version: body.version, dryRun: body.dryRun, actor: who.actor },
      { timeoutMs: MIGRATE_DEPLOYMENT_RUNS_TIMEOUT_MS },
    );
  }
}
