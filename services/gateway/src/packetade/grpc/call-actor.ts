import type { ActorPrincipal } from '../actors/actor-principal';

// The access guard authenticates a gRPC call and the handler reads who it was; the call object
// is the one thing both see.
const actors = new WeakMap<object, ActorPrincipal>();

export function bindCallActor(call: object, actor: ActorPrincipal): void {
  actors.set(call, actor);
}

export function callActor(call: object): ActorPrincipal {
  const actor = actors.get(call);
  // Reaching a handler without one means its access policy was not the actor token's: a programming error.
  if (!actor) throw new Error('a PacketADE gRPC handler ran without an authenticated actor');
  return actor;
}
