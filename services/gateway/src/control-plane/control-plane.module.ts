import { Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AlertsController } from './alerts.controller';
import { YAML_CONTENT_TYPES } from './definition-body';
import { DeploymentsController } from './deployments.controller';
import { HooksController } from './hooks.controller';
import { RunsController } from './runs.controller';
import { WorkersController } from './workers.controller';
import { ReadinessRoutesModule } from '../readiness/readiness-routes.module';

/** The control-plane routes: workers, versions, deployments, runs, alerts and webhook ingress, each forwarding to intake over NATS, with templates and readiness. */
@Module({ imports: [ReadinessRoutesModule], controllers: [WorkersController, DeploymentsController, RunsController, AlertsController, HooksController] })
export class ControlPlaneModule {}

/**
 * YAML definitions arrive as text. Webhook bodies are JSON (kept raw with Nest's `rawBody`) or
 * text; any other media type is refused with 415 rather than parsed by a catch-all.
 */
export function registerControlPlaneParsers(app: NestFastifyApplication): void {
  app.getHttpAdapter().getInstance().addContentTypeParser(YAML_CONTENT_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
}
