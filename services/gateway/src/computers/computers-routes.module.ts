import { Module } from '@nestjs/common';
import { ComputersController } from './computers.controller';

/** `/api/v1/workspaces/:ws/computers`: forwards to the computer registry of the sandbox service over NATS; needs BusModule. */
@Module({ controllers: [ComputersController] })
export class ComputersRoutesModule {}
