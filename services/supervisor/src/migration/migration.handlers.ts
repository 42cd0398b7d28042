import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { OnCommand } from '@packetagent/bus';
import { MigrationCommands, type RunMigrationResult } from '@packetagent/contracts';
import { MigrateRunUseCase } from './migrate-run';

type Req<K extends keyof typeof MigrationCommands> = z.output<(typeof MigrationCommands)[K]['request']>;

/** `supervisor.run.migrate` and `supervisor.deployment.migrate_runs`, served by every replica. */
@Injectable()
export class MigrationCommandHandlers {
  constructor(private readonly migrateRun: MigrateRunUseCase) {}

  @OnCommand(MigrationCommands.migrateRun)
  run(request: Req<'migrateRun'>): Promise<RunMigrationResult> {
    return this.migrateRun.execute(request);
  }

  @OnCommand(MigrationCommands.migrateDeploymentRuns)
  deployment(request: Req<'migrateDeploymentRuns'>): Promise<{ deploymentId: string; results: RunMigrationResult[] }> {
    return this.migrateRun.forDeployment(request);
  }
}
