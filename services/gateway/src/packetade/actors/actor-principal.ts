import type { Actor, ActorOperation } from '@packetagent/contracts';

/** The caller of a PacketADE door operation: one actor token, bound to one workspace. */
export interface ActorPrincipal {
  tokenId: string;
  workspaceId: string;
  actorName: string;
  operations: readonly ActorOperation[];
  /** What goes into events: the token, so an audit can tell one rotation from the next. */
  actor: Actor & { kind: 'actor_token' };
}
