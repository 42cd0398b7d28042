import type { ComputerRecord, ComputerStatus } from '@packetagent/contracts';
import type { StoredProbe } from './computer-store';

/** One probe result as a replica received it: `receivedAt` is that replica's monotonic clock. */
export interface Observation {
  ok: boolean;
  /** The failure proves the computer is not serving us (refused, rejected, changed key); a timeout does not. */
  affirmative: boolean;
  detail: string;
  probedAt: Date;
  receivedAt: number;
  changedKey: { presented: string; at: Date } | null;
}

/** What this replica last received of one computer: the latest result and the latest success. */
export interface Observed {
  latest: Observation;
  lastSuccess: Observation | null;
}

/**
 * Status from what this replica observed, never from what was typed or stored: `online` only
 * while the last success it received is within the window, `offline` only while an affirmative
 * failure is the latest thing it received within the window, `unknown` otherwise. The stored
 * probe only says when status was last observed.
 */
export function computerStatus(record: ComputerRecord, observed: Observed | null, stored: StoredProbe | null, nowMonotonic: number, staleAfterMs: number): ComputerStatus {
  const changedKey = observed?.latest.changedKey ?? stored?.changedKey ?? null;
  const hostKey: ComputerStatus['hostKey'] =
    record.kind !== 'ssh' ? { state: 'not_applicable', presented: null, at: null } : changedKey ? { state: 'changed', presented: changedKey.presented, at: changedKey.at.toISOString() } : { state: 'pinned', presented: null, at: null };
  const lastSuccessAt = observed?.lastSuccess?.probedAt ?? stored?.lastSuccessAt ?? null;
  const base = { observedAt: lastSuccessAt?.toISOString() ?? null, staleAfterMs, hostKey };
  if (!observed) {
    const detail = stored ? `no probe received by this replica yet; the last probe said: ${stored.detail}` : 'never probed';
    return { ...base, state: 'unknown', ageMs: null, detail };
  }
  const age = (observation: Observation) => Math.max(0, Math.round(nowMonotonic - observation.receivedAt));
  const latestAge = age(observed.latest);
  if (observed.latest.ok && latestAge <= staleAfterMs) return { ...base, state: 'online', ageMs: latestAge, detail: observed.latest.detail };
  if (!observed.latest.ok && observed.latest.affirmative && latestAge <= staleAfterMs) return { ...base, state: 'offline', ageMs: latestAge, detail: observed.latest.detail };
  // A probe that timed out proves nothing either way; an earlier success still counts inside the window.
  if (observed.lastSuccess && age(observed.lastSuccess) <= staleAfterMs) return { ...base, state: 'online', ageMs: age(observed.lastSuccess), detail: `${observed.latest.detail} (the last success was ${age(observed.lastSuccess)} ms ago)` };
  const detail = latestAge > staleAfterMs ? `no probe result for ${latestAge} ms (stale after ${staleAfterMs} ms); the last said: ${observed.latest.detail}` : observed.latest.detail;
  return { ...base, state: 'unknown', ageMs: latestAge, detail };
}

/** What this replica observed of every computer, fed by the probe results published on the bus. */
export class ObservationBoard {
  private readonly observed = new Map<string, Observed>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  now(): number {
    return this.clock();
  }

  record(workspaceId: string, name: string, target: string, result: Omit<Observation, 'receivedAt'>): void {
    const key = this.key(workspaceId, name, target);
    const observation: Observation = { ...result, receivedAt: this.clock() };
    const before = this.observed.get(key);
    this.observed.set(key, { latest: observation, lastSuccess: observation.ok ? observation : (before?.lastSuccess ?? null) });
  }

  /** Observations belong to one target (host, port, user, pinned keys): a computer pointed elsewhere starts from nothing. */
  get(workspaceId: string, name: string, target: string): Observed | null {
    return this.observed.get(this.key(workspaceId, name, target)) ?? null;
  }

  forget(workspaceId: string, name: string): void {
    for (const key of this.observed.keys()) if (key.startsWith(`${workspaceId}/${name}@`)) this.observed.delete(key);
  }

  private key(workspaceId: string, name: string, target: string): string {
    return `${workspaceId}/${name}@${target}`;
  }
}

/** What observations of a computer are about: where it is and which keys it must present. */
export function targetKey(record: ComputerRecord): string {
  return record.ssh ? `${record.ssh.user}@${record.ssh.host}:${record.ssh.port}/${[...record.ssh.hostKeys].sort().join(',')}` : 'local';
}
