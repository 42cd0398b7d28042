import { Module } from '@nestjs/common';
import { ApproverIdentity } from './approver-identity';
import { AttentionController } from './attention.controller';

/** `/api/v1/workspaces/:ws/attention`: inspect and answer approvals; each forwards to policy over NATS. */
@Module({ controllers: [AttentionController], providers: [ApproverIdentity] })
export class AttentionRoutesModule {}
