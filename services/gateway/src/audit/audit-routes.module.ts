import { Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { ExportEvidence } from './usecases/export-evidence.usecase';

/** Digest-chain verification and evidence bundles; reads the event store directly. */
@Module({ controllers: [AuditController], providers: [ExportEvidence] })
export class AuditRoutesModule {}
