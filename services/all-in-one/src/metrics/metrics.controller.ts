import { Public } from '@packetagent/gateway';
import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { MetricsService } from './metrics.service';

/** Probes and scrapes carry no credentials; they reveal no workspace data. */
@Public()
@Controller()
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  /** Prometheus text exposition format. */
  @Get('metrics')
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOkResponse({ description: 'Prometheus text exposition format, version 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
