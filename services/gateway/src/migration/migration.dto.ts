import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { MigrationCommands, RunMigrationResultSchema } from '@packetagent/contracts';

const version = z.number().int().positive().describe("the version to move to: the one the run's deployment pins now");

export const MigrateRunBody = z.strictObject({
  version,
  dryRun: z.boolean().default(false).describe('compare the decisions without moving the run'),
});
export class MigrateRunDto extends createZodDto(MigrateRunBody) {}

export const MigrateDeploymentRunsBody = z.strictObject({
  version,
  // A deployment-wide move starts as a comparison: moving every waiting run takes saying so.
  dryRun: z.boolean().default(true).describe('compare without moving any run (the default); false moves every run whose decisions all match'),
});
export class MigrateDeploymentRunsDto extends createZodDto(MigrateDeploymentRunsBody) {}

export class RunMigrationResultDto extends createZodDto(RunMigrationResultSchema) {}
export class DeploymentMigrationResultDto extends createZodDto(MigrationCommands.migrateDeploymentRuns.response) {}
