import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { BudgetCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { BudgetReviewDto, BudgetsQueryDto, BudgetUsageDto, ReviewBudgetDto } from './budgets.dto';

/** Amounts are integers: micro-dollars for the `usd` unit, calls for `count:<tool>`. */
@ApiTags('budgets')
@Controller('api/v1/workspaces/:ws/budgets')
export class BudgetsController {
  constructor(private readonly bus: CommandBus) {}

  @Get()
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: BudgetUsageDto })
  usage(@Principal() who: WorkspacePrincipal, @Query() query: BudgetsQueryDto) {
    return this.bus.request(BudgetCommands.usage, { workspaceId: who.workspaceId, kind: query.kind ?? null, id: query.id ?? null, limit: query.limit });
  }

  /** Lifts the block an overspend put on a scope. */
  @Post('review')
  @HttpCode(200)
  @RequirePermission('deployment-control')
  @ZodResponse({ status: 200, type: BudgetReviewDto })
  review(@Principal() who: WorkspacePrincipal, @Body() body: ReviewBudgetDto) {
    return this.bus.request(BudgetCommands.review, { workspaceId: who.workspaceId, scope: body.scope, note: body.note ?? null, actor: who.actor });
  }
}
