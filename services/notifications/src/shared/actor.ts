import type { ActorRef } from '@packetagent/contracts';

/** The actor of what the notifications service records on its own. */
export const NOTIFICATIONS_ACTOR: ActorRef = { kind: 'service', id: 'notifications' };
