import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { IntakeCommands, type JsonValue } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { AlertsIngestedDto } from './control-plane-replies.dto';

/**
 * Alertmanager's webhook receiver, payload version 4 unchanged: point a `webhook_configs` url at
 * this route with an API key of role member or above as its bearer credentials.
 */
@ApiTags('triggers')
@Controller('api/v1/workspaces/:ws/alerts')
export class AlertsController {
  constructor(private readonly bus: CommandBus) {}

  @Post()
  @HttpCode(202)
  @RequirePermission('run-control')
  @ApiBody({ description: 'Prometheus Alertmanager webhook payload, version 4', schema: { type: 'object' } })
  @ZodResponse({ status: 202, type: AlertsIngestedDto })
  ingest(@Principal() who: WorkspacePrincipal, @Body() payload: unknown) {
    return this.bus.request(IntakeCommands.ingestAlerts, { workspaceId: who.workspaceId, actor: who.actor, payload: (payload ?? null) as JsonValue });
  }
}
