import { z } from 'zod';

/** What a PacketADE actor token may be allowed to do; each operation of the door needs one. */
export const ACTOR_OPERATIONS = ['validate', 'deploy', 'update', 'activate', 'inspect', 'list_runs', 'pause', 'resume', 'rollback', 'revoke', 'events'] as const;
export type ActorOperation = (typeof ACTOR_OPERATIONS)[number];
export const ActorOperationSchema = z.enum(ACTOR_OPERATIONS);

/** An actor is named like a worker: it owns the deployments made with its tokens, across token rotations. */
export const ACTOR_NAME = /^[a-z][a-z0-9-]{1,62}$/;
export const ActorNameSchema = z.string().regex(ACTOR_NAME, { error: `must match ${ACTOR_NAME.source}` });

/** A token lives at most a year; one that never expires is refused. */
export const MAX_ACTOR_TOKEN_LIFETIME_DAYS = 366;
