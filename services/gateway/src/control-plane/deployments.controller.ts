import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply } from 'fastify';
import { randomUUID } from 'node:crypto';
import { IntakeCommands, type JsonValue } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { DeploymentNotReadyError } from '../readiness/deployment-not-ready.error';
import { StoredVersionReadiness } from '../readiness/version-readiness';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import {
  CreateDeploymentDto,
  DeploymentActionDto,
  DeploymentsQueryDto,
  ManualRunDto,
  RollbackDto,
  UpdateDeploymentDto,
} from './control-plane.dto';
import { ActivationDto, ControlledDeploymentDto, CreatedDeploymentDto, DeploymentDto, DeploymentPageDto } from './control-plane-replies.dto';

/** An Idempotency-Key header is free text: kept to the length a body key may have; an empty one is none. */
function idempotencyKeyHeader(value: string | undefined): string | null {
  return value ? value.slice(0, 200) : null;
}

@ApiTags('deployments')
@Controller('api/v1/workspaces/:ws/deployments')
export class DeploymentsController {
  constructor(
    private readonly bus: CommandBus,
    private readonly readiness: StoredVersionReadiness,
  ) {}

  /**
   * Webhook secrets appear in this answer only. With an idempotency key (body or Idempotency-Key
   * header) the same key again answers 200 with the deployment it created (its secrets not
   * repeated), and a key used for another worker, version or overrides is refused with 409.
   */
  @Post()
  @RequirePermission('deploy')
  @ZodResponse({ status: 201, type: CreatedDeploymentDto })
  async create(
    @Principal() who: WorkspacePrincipal,
    @Headers('idempotency-key') headerKey: string | undefined,
    @Body() body: CreateDeploymentDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const key = body.idempotencyKey ?? idempotencyKeyHeader(headerKey);
    // A deployment that cannot run is refused before anything is armed, unless asked for anyway.
    const { workerName, readiness } = await this.readiness.of(who.workspaceId, body.workerId, body.version ?? null, body.overrides);
    if (!readiness.ready && !body.acceptMissing) throw new DeploymentNotReadyError(workerName, readiness.missing);
    const result = await this.bus.request(IntakeCommands.createDeployment, {
      workspaceId: who.workspaceId,
      actor: who.actor,
      workerId: body.workerId,
      version: body.version ?? null,
      overrides: body.overrides as JsonValue,
      requestKey: key === null ? null : `api:${key}`,
    });
    reply.status(result.created ? 201 : 200);
    return { ...result, readiness };
  }

  @Get()
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: DeploymentPageDto })
  list(@Principal() who: WorkspacePrincipal, @Query() query: DeploymentsQueryDto) {
    return this.bus.request(IntakeCommands.listDeployments, {
      workspaceId: who.workspaceId,
      workerId: query.workerId ?? null,
      cursor: query.cursor ?? null,
      limit: query.limit,
    });
  }

  @Get(':id')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: DeploymentDto })
  get(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    return this.bus.request(IntakeCommands.getDeployment, { workspaceId: who.workspaceId, deploymentId: id });
  }

  @Post(':id/pause')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  pause(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: DeploymentActionDto) {
    return this.control(who, id, 'pause', body.reason);
  }

  @Post(':id/resume')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  resume(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: DeploymentActionDto) {
    return this.control(who, id, 'resume', body.reason);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  revoke(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: DeploymentActionDto) {
    return this.control(who, id, 'revoke', body.reason);
  }

  @Post(':id/rollback')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  rollback(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: RollbackDto) {
    return this.control(who, id, 'rollback', body.reason, body.version);
  }

  /** Moves the deployment forward to a newer version of its worker; the version it runs already changes nothing. */
  @Post(':id/update')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  update(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: UpdateDeploymentDto) {
    return this.control(who, id, 'update', body.reason, body.version);
  }

  /**
   * Manual activation. The idempotency key (body or Idempotency-Key header) is the dedupe key:
   * the same key again answers 200 with the same run; a new run answers 201.
   */
  @Post(':id/runs')
  @RequirePermission('run-control')
  @ZodResponse({ status: 201, type: ActivationDto })
  async start(
    @Principal() who: WorkspacePrincipal,
    @Param('id') id: string,
    @Headers('idempotency-key') headerKey: string | undefined,
    @Body() body: ManualRunDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const key = body.idempotencyKey ?? idempotencyKeyHeader(headerKey) ?? randomUUID();
    const result = await this.bus.request(IntakeCommands.activate, {
      workspaceId: who.workspaceId,
      actor: who.actor,
      deploymentId: id,
      source: 'manual',
      dedupeKey: `manual:${key}`,
      input: (body.input ?? null) as JsonValue | null,
      details: { idempotencyKey: key },
    });
    reply.status(result.duplicate ? 200 : 201);
    return result;
  }

  private control(who: WorkspacePrincipal, deploymentId: string, action: 'pause' | 'resume' | 'revoke' | 'rollback' | 'update', reason?: string, version?: number) {
    return this.bus.request(IntakeCommands.controlDeployment, {
      workspaceId: who.workspaceId,
      actor: who.actor,
      deploymentId,
      action,
      version: version ?? null,
      reason: reason ?? null,
    });
  }
}
