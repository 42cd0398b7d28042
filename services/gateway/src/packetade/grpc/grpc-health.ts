import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Server } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';

export const PACKETADE_SERVICE = 'packetagent.v1.PacketAde';

/**
 * grpc.health.v1.Health of the door: SERVING for "" and the service while the app serves, and
 * NOT_SERVING from the moment it starts to stop (before the transport closes), so a balancer
 * that watches health drains it first.
 */
@Injectable()
export class PacketAdeGrpcHealth implements BeforeApplicationShutdown {
  private readonly health = new HealthImplementation({ '': 'SERVING', [PACKETADE_SERVICE]: 'SERVING' });

  addToServer(server: Server): void {
    this.health.addToServer(server);
  }

  beforeApplicationShutdown(): void {
    this.health.setStatus('', 'NOT_SERVING');
    this.health.setStatus(PACKETADE_SERVICE, 'NOT_SERVING');
  }
}
