import { createHash, randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { runControlStreamId, runStreamId } from '@packetagent/contracts';

export const newId = (): string => uuidv7();

/** Stable for a deployment and a trigger key: a rollback keeps the webhook URLs of triggers it keeps. */
export function triggerIdFor(deploymentId: string, key: string): string {
  return `trg_${createHash('sha256').update(`${deploymentId}\0${key}`).digest('hex').slice(0, 24)}`;
}

export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

export const Streams = {
  worker: (id: string) => `worker-${id}`,
  deployment: (id: string) => `deployment-${id}`,
  run: runStreamId,
  runControl: runControlStreamId,
} as const;
