import { Module } from '@nestjs/common';
import { DeploymentMigrationController, RunMigrationController } from './migration.controller';

/** `/api/v1/workspaces/:ws/runs/:runId/migrate` and `/deployments/:deploymentId/migrate-runs`: forwarded to the supervisor over NATS. */
@Module({ controllers: [RunMigrationController, DeploymentMigrationController] })
export class MigrationRoutesModule {}
