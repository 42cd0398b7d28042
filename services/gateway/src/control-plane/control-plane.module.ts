import { Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AlertsController } from './alerts.controller';
import { YAML_CONTENT_TYPES } from './definition-body';
import { DeploymentsController } from './deployments.controller';
import { HooksController } from './hooks.controller';
import { RunsController } from './runs.controller';
import { WorkersController } from './workers.controller';

/** The control-plane routes: workers, versions, deployments, runs, alerts and webhook ingress; each forwards to intake over NATS. */
@Module({ controllers: [WorkersController, DeploymentsController, RunsController, AlertsController, HooksController] })
export class ControlPlaneModule {}

/** YAML definitions arrive as text; any other body type reaches webhook ingress as bytes. */
export function registerControlPlaneParsers(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addContentTypeParser(YAML_CONTENT_TYPES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  if (!fastify.hasContentTypeParser('*')) {
    fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  }
}
