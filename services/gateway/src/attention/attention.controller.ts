import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { PolicyCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { ApproverIdentity } from './approver-identity';
import { ApproveAttentionDto, AttentionDto, AttentionListDto, AttentionQueryDto, RejectAttentionDto } from './attention.dto';

/** Approvals waiting on a person; answers go to policy, which records exactly one per request. */
@ApiTags('attention')
@Controller('api/v1/workspaces/:ws/attention')
export class AttentionController {
  constructor(
    private readonly bus: CommandBus,
    private readonly approvers: ApproverIdentity,
  ) {}

  @Get()
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: AttentionListDto })
  list(@Principal() who: WorkspacePrincipal, @Query() query: AttentionQueryDto) {
    return this.bus.request(PolicyCommands.listAttention, { workspaceId: who.workspaceId, state: query.state ?? null, limit: query.limit });
  }

  @Get(':id')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: AttentionDto })
  get(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    return this.bus.request(PolicyCommands.getAttention, { workspaceId: who.workspaceId, attentionId: id });
  }

  @Post(':id/approve')
  @HttpCode(200)
  @RequirePermission('approve')
  @ZodResponse({ status: 200, type: AttentionDto })
  async approve(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: ApproveAttentionDto) {
    return this.bus.request(PolicyCommands.approveAttention, { workspaceId: who.workspaceId, attentionId: id, ...body, actor: who.actor, ...(await this.approvers.of(who)) });
  }

  @Post(':id/reject')
  @HttpCode(200)
  @RequirePermission('approve')
  @ZodResponse({ status: 200, type: AttentionDto })
  async reject(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: RejectAttentionDto) {
    return this.bus.request(PolicyCommands.rejectAttention, { workspaceId: who.workspaceId, attentionId: id, reason: body.reason, actor: who.actor, ...(await this.approvers.of(who)) });
  }
}
