import { Module } from '@nestjs/common';
import { AttentionController } from './attention.controller';

/** `/api/v1/workspaces/:ws/attention`: inspect and answer approvals; each forwards to policy over NATS. */
@Module({ controllers: [AttentionController] })
export class AttentionRoutesModule {}
