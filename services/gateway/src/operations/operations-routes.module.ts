import { Module } from '@nestjs/common';
import { ConsoleReads } from './console-reads';
import { ConsoleReadsController, SetupStatusController } from './console-reads.controller';
import { OperationsController } from './operations.controller';

/** The workspace overview and run summaries (forwarded to the projector over NATS), and the console's reads of names, run facts and trends. */
@Module({ controllers: [OperationsController, ConsoleReadsController, SetupStatusController], providers: [ConsoleReads] })
export class OperationsRoutesModule {}
