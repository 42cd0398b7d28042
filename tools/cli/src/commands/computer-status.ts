import { z } from 'zod';

/** The status fields of a computer the CLI reads (ComputerStatusSchema); a state it does not know is shown as sent. */
export const ComputerStatusSchema = z.looseObject({
  state: z.string(),
  observedAt: z.string().nullable(),
  ageMs: z.number().nullable(),
  staleAfterMs: z.number(),
  detail: z.string(),
  hostKey: z.looseObject({ state: z.string(), presented: z.string().nullable(), at: z.string().nullable() }),
});
export type ComputerStatus = z.infer<typeof ComputerStatusSchema>;

/** "4 s", "3 min", "2 h", "5 d": rounded down, so an age never reads fresher than it is old. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/**
 * How long ago the status was observed: the answering replica's own measure when it gave one
 * (its monotonic clock), else the wall-clock time of the observation against ours; null when never.
 */
export function observedAgoMs(status: ComputerStatus, nowMs: number): number | null {
  if (status.ageMs !== null) return status.ageMs;
  if (status.observedAt === null) return null;
  const at = Date.parse(status.observedAt);
  return Number.isNaN(at) ? null : Math.max(0, nowMs - at);
}

/**
 * One line for the state and how fresh it is: "online, observed 4 s ago", "unknown: last
 * observed 3 min ago (stale after 45 s)", "unknown: never observed", "offline: <why>, observed 1 min ago".
 */
export function describeStatus(status: ComputerStatus, nowMs: number): string {
  const ago = observedAgoMs(status, nowMs);
  const observed = ago === null ? null : formatAge(ago);
  switch (status.state) {
    case 'online':
      return observed === null ? 'online' : `online, observed ${observed} ago`;
    case 'unknown':
      return observed === null ? 'unknown: never observed' : `unknown: last observed ${observed} ago (stale after ${formatAge(status.staleAfterMs)})`;
    case 'offline': {
      const why = status.detail ? `: ${status.detail}` : '';
      return observed === null ? `offline${why}` : `offline${why}, observed ${observed} ago`;
    }
    default:
      return observed === null ? status.state : `${status.state}, observed ${observed} ago`;
  }
}

/** The warning for a computer that presented a key that is not pinned, or null when there is none. */
export function hostKeyWarning(status: ComputerStatus): string | null {
  if (status.hostKey.state !== 'changed') return null;
  const presented = status.hostKey.presented ?? 'a key';
  const when = status.hostKey.at ? ` at ${status.hostKey.at}` : '';
  return `HOST KEY CHANGED: the computer presented ${presented}${when}, which is not pinned; commands on it are refused until the record is updated`;
}
