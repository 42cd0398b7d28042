import { Module } from '@nestjs/common';
import { CredentialsController } from './credentials.controller';

/** `/api/v1/workspaces/:ws/credentials`: forwards to the vault over NATS. */
@Module({ controllers: [CredentialsController] })
export class CredentialsRoutesModule {}
