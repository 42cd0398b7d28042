import { Module } from '@nestjs/common';
import { DraftsController } from '../templates/drafts.controller';
import { DraftWorkerUseCase } from '../templates/draft-worker.usecase';
import { InstantiateTemplateUseCase } from '../templates/instantiate-template.usecase';
import { TemplatesController } from '../templates/templates.controller';
import { PackagePreflight } from './preflight';
import { ReadinessController } from './readiness.controller';
import { StoredVersionReadiness } from './version-readiness';
import { WorkerReadiness } from './worker-readiness';

/** Starter templates, drafts from a description, and readiness reports: what a definition would lack to run here, before it is saved or deployed. */
@Module({
  controllers: [TemplatesController, DraftsController, ReadinessController],
  providers: [PackagePreflight, WorkerReadiness, StoredVersionReadiness, InstantiateTemplateUseCase, DraftWorkerUseCase],
  exports: [StoredVersionReadiness],
})
export class ReadinessRoutesModule {}
