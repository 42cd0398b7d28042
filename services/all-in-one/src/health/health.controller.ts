import { Public } from '@packetagent/gateway';
import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ReadinessService, type Readiness } from './readiness.service';
import { LivenessDto, ReadinessReportDto } from './health.dto';

/** Probes and scrapes carry no credentials; they reveal no workspace data. */
@Public()
@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process serves requests. */
  @Get('healthz')
  @ApiOkResponse({ description: 'the process serves requests', type: LivenessDto.Output })
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: Postgres, NATS and the relay; 503 naming what is failing. */
  @Get('readyz')
  @ApiOkResponse({ description: 'every check passed', type: ReadinessReportDto.Output })
  @ApiServiceUnavailableResponse({ description: 'a check failed: `failing` names which', type: ReadinessReportDto.Output })
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<Readiness> {
    const report = await this.readiness.check();
    reply.status(report.status === 'ready' ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}
