import { Module } from '@nestjs/common';
import { SupervisionController } from './supervision.controller';

/** `/api/v1/workspaces/:ws/runs/:runId/{supervision,release,end}`: forwarded to the supervisor over NATS. */
@Module({ controllers: [SupervisionController] })
export class SupervisionRoutesModule {}
