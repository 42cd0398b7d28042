import { Module, type DynamicModule } from '@nestjs/common';
import { DEFAULT_LIVE_OPTIONS, LIVE_OPTIONS, type LiveOptions } from '../live/live.options';
import { ActorTokens } from './actors/actor-tokens';
import { PacketAdeAdminController } from './actors/packetade-admin.controller';
import { ActorCalls } from './door/actor-calls';
import { ActorDeployments } from './door/actor-deployments';
import { PackageCheck } from './door/package-check';
import { PacketAdeController } from './door/packetade.controller';
import { PacketAdeDoor } from './door/packetade-door';
import { PackagePreflight } from '../readiness/preflight';
import { FeedAcknowledgements } from './feed/acknowledgements';
import { ActorFeed } from './feed/actor-feed';
import { PacketAdeFeedController } from './feed/feed.controller';
import { FeedStore } from './feed/feed-store';
import { PacketAdeGrpcController } from './grpc/packetade.grpc.controller';
import { PackageTrust } from './trust/package-trust';
import { ActorTokenAuthenticator } from './actors/actor-token.authenticator';
import { ActorTokenGrpcGuard } from './grpc/actor-token.grpc-guard';
import { PacketAdeGrpcHealth } from './grpc/grpc-health';

/**
 * The PacketADE door: actor tokens and package trust (admin routes), the operations over REST
 * and gRPC (one implementation, PacketAdeDoor), and the actor's event feed. The gRPC
 * controller answers only when the app connects the gRPC transport (see grpc/grpc-server.ts).
 */
@Module({})
export class PacketAdeRoutesModule {
  static forRoot(options: Partial<LiveOptions> = {}): DynamicModule {
    return {
      module: PacketAdeRoutesModule,
      controllers: [PacketAdeAdminController, PacketAdeController, PacketAdeFeedController, PacketAdeGrpcController],
      providers: [
        { provide: LIVE_OPTIONS, useValue: { ...DEFAULT_LIVE_OPTIONS, ...options } },
        ActorTokenAuthenticator,
        ActorTokenGrpcGuard,
        PacketAdeGrpcHealth,
        ActorTokens,
        PackageTrust,
        PackageCheck,
        PackagePreflight,
        ActorCalls,
        ActorDeployments,
        PacketAdeDoor,
        FeedStore,
        FeedAcknowledgements,
        ActorFeed,
      ],
    };
  }
}
