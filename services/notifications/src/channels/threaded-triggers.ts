import type { NotificationTrigger } from '@packetagent/contracts';

/**
 * Messages of a run that edit its one progress message where the channel can (Slack's
 * chat.update, PacketChat's replaceable card): its progress and its outcome.
 */
export const THREADED_TRIGGERS: ReadonlySet<NotificationTrigger> = new Set(['progress', 'succeeded', 'failed', 'abandoned', 'any_terminal']);
