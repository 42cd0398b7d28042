import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { NotificationsCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { DeliveriesQueryDto, DeliveryDto, DeliveryPageDto } from './notifications.dto';

/** The notification outbox of a workspace: what was sent where, what is retrying, what is dead-lettered. */
@ApiTags('notifications')
@Controller('api/v1/workspaces/:ws/notifications/deliveries')
export class DeliveriesController {
  constructor(private readonly bus: CommandBus) {}

  @Get()
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'List deliveries, newest first', description: 'Filter by state (pending, delivered, dead) or run; page with `after` set to the previous page\'s `next`.' })
  @ZodResponse({ status: 200, type: DeliveryPageDto })
  list(@Principal() who: WorkspacePrincipal, @Query() query: DeliveriesQueryDto) {
    return this.bus.request(NotificationsCommands.listDeliveries, {
      workspaceId: who.workspaceId,
      state: query.state ?? null,
      runId: query.runId ?? null,
      limit: query.limit,
      after: query.after ?? null,
    });
  }

  @Get(':id')
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'One delivery with every attempt', description: 'Attempts carry their time, the wait before them, the status and the failure code.' })
  @ZodResponse({ status: 200, type: DeliveryDto })
  get(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    return this.bus.request(NotificationsCommands.getDelivery, { workspaceId: who.workspaceId, deliveryId: id });
  }

  @Post(':id/redrive')
  @HttpCode(200)
  @RequirePermission('run-control')
  @ApiOperation({ summary: 'Redrive a dead-lettered delivery', description: 'It becomes due again with a new expiry and is sent once more under the same delivery id; recorded as `notification.redriven`. Only a dead delivery can be redriven (409 `delivery_not_dead`).' })
  @ZodResponse({ status: 200, type: DeliveryDto })
  redrive(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    return this.bus.request(NotificationsCommands.redrive, { workspaceId: who.workspaceId, deliveryId: id, actor: who.actor });
  }
}
