import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { ActorTokenAuthenticator } from '../actors/actor-token.authenticator';
import { bindCallActor } from './call-actor';

/**
 * The gRPC door's guard: the app's AccessGuard serves HTTP only, so the gRPC controller names
 * this one itself. Every call must carry an actor token in its `authorization` metadata.
 */
@Injectable()
export class ActorTokenGrpcGuard implements CanActivate {
  constructor(private readonly tokens: ActorTokenAuthenticator) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'rpc') return false;
    const [, metadata, call] = context.getArgs<[unknown, Metadata, object]>();
    bindCallActor(call, await this.tokens.fromAuthorization(metadata.get('authorization')[0]));
    return true;
  }
}
