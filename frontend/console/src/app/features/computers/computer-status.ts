import type { Tone } from '../../shared/format';
import type { Problem } from '../../shared/problem';
import type { ComputerStatus, ComputerView } from './computers.api';

export interface StatusShown {
  /** The state as it can still be backed now: an online answer past its staleness window reads unknown. */
  state: string;
  text: string;
  tone: Tone;
}

/** "4 s", "3 min", "2 h", "5 d": rounded down, so an age never reads fresher than it is. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/**
 * How long ago the status was observed, `sinceAnswerMs` after the server answered: its own
 * measure (a monotonic clock) plus the time since, else its wall-clock time against ours.
 */
export function observedAgoMs(status: ComputerStatus, sinceAnswerMs: number, nowMs: number): number | null {
  if (status.ageMs !== null) return status.ageMs + Math.max(0, sinceAnswerMs);
  if (status.observedAt === null) return null;
  const at = Date.parse(status.observedAt);
  return Number.isNaN(at) ? null : Math.max(0, nowMs - at);
}

const TONES: Record<string, Tone> = { online: 'ok', offline: 'bad', unknown: 'warn' };

/**
 * The state and how fresh it is, as a page open for a while can still back it: "online, observed
 * 4 s ago", "unknown: last observed 3 min ago (stale after 45 s)", "unknown: never observed".
 */
export function statusShown(status: ComputerStatus, sinceAnswerMs: number, nowMs: number): StatusShown {
  const ago = observedAgoMs(status, sinceAnswerMs, nowMs);
  const stale = ago !== null && ago > status.staleAfterMs;
  const state = status.state === 'online' && (stale || ago === null) ? 'unknown' : status.state;
  const observed = ago === null ? null : formatAge(ago);
  let text: string;
  if (state === 'online') text = `online, observed ${observed} ago`;
  else if (state === 'unknown') text = observed === null ? 'unknown: never observed' : `unknown: last observed ${observed} ago (stale after ${formatAge(status.staleAfterMs)})`;
  else if (state === 'offline') text = `offline${status.detail ? `: ${status.detail}` : ''}${observed === null ? '' : `, observed ${observed} ago`}`;
  else text = observed === null ? state : `${state}, observed ${observed} ago`;
  return { state, text, tone: TONES[state] ?? 'neutral' };
}

/** The warning for a computer that presented a key that is not pinned, or null when there is none. */
export function hostKeyWarning(status: ComputerStatus): string | null {
  if (status.hostKey.state !== 'changed') return null;
  const when = status.hostKey.at ? ` at ${status.hostKey.at}` : '';
  return `Host key changed: the computer presented ${status.hostKey.presented ?? 'a key'}${when}, which is not pinned. Commands on it are refused until the record is updated.`;
}

export function targetOf(computer: ComputerView): string {
  return computer.ssh ? `${computer.ssh.user}@${computer.ssh.host}:${computer.ssh.port}` : 'local sandbox';
}

const FINGERPRINT = /SHA256:[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])/;

/** The fingerprint a refused registration presented: its issue at `acceptHostKey`, else its detail. */
export function presentedHostKeyOf(problem: Problem): string | null {
  const texts = [...problem.errors.filter((issue) => issue.path === 'acceptHostKey').map((issue) => issue.message), problem.detail];
  for (const text of texts) {
    const found = FINGERPRINT.exec(text);
    if (found) return found[0];
  }
  return null;
}
