import { Module } from '@nestjs/common';
import { OperationsController } from './operations.controller';

/** The workspace overview and run summaries; forwards to the projector over NATS. */
@Module({ controllers: [OperationsController] })
export class OperationsRoutesModule {}
