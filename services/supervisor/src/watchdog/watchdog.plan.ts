/**
 * What the stuck-run watchdog does about what one sweep saw, as a pure function: which runs it
 * counts as without an owner, which it wakes, and for which it asks a person. The sweep gathers
 * the observations and carries the actions out (stuck-run-watchdog.ts).
 */

/**
 * Why a run that is not over has no live owner:
 * - `unclaimed`: admitted, but no replica ever claimed it (its wake was lost);
 * - `lapsed`: its holder's lease lapsed (the engine's recovery sweep takes it over; counted only);
 * - `wait_lost`: it waits on an attention record policy no longer has;
 * - `wait_answered`: the attention it waits on was answered, yet it still waits (that wake was lost);
 * - `quarantined`: its events cannot be replayed; it waits for a person to release or end it.
 */
export const FINDING_CAUSES = ['unclaimed', 'lapsed', 'wait_lost', 'wait_answered', 'quarantined'] as const;
export type FindingCause = (typeof FINDING_CAUSES)[number];

export type Observation =
  | { cause: 'unclaimed'; runId: string; workspaceId: string; admittedAt: Date }
  | { cause: 'lapsed'; runId: string; workspaceId: string; lapsedAt: Date; holder: string | null }
  | { cause: 'wait_lost'; runId: string; workspaceId: string; attentionId: string }
  | { cause: 'wait_answered'; runId: string; workspaceId: string; attentionId: string; state: string; answeredAt: Date }
  | { cause: 'quarantined'; runId: string; workspaceId: string; reason: string };

export interface Finding {
  runId: string;
  workspaceId: string;
  cause: FindingCause;
  detail: string;
  firstSeenAt: Date;
  /** Wakes the watchdog sent for this cause. */
  wakes: number;
  /** Wakes after which the cause was still there (or that failed). */
  failedWakes: number;
  /** The attention raised for this cause, once it has been. */
  attentionId: string | null;
}

/** What became of the last wake the watchdog sent for a run. */
export type WakeOutcome = 'pending' | 'done' | 'busy' | 'failed';

export type AttentionKind = 'run_without_owner' | 'wait_lost' | 'run_quarantined';

export interface AttentionRequest {
  kind: AttentionKind;
  verb: string;
  /** The same for the same cause of the same run, so policy answers the record already raised. */
  arguments: Record<string, string>;
}

export type SweepAction =
  | { kind: 'wake'; runId: string; workspaceId: string }
  | { kind: 'raise'; key: string; runId: string; workspaceId: string; attention: AttentionRequest };

export interface SweepInput {
  now: Date;
  /** How long a run may be without an owner before it counts, in milliseconds. */
  graceMs: number;
  observed: readonly Observation[];
  /** The findings the previous sweep stored, by `findingKey`. */
  previous: ReadonlyMap<string, Finding>;
  /** Keys whose cause this sweep could not check (policy did not answer): their previous findings stand. */
  unchecked: ReadonlySet<string>;
  /** The outcome of the last wake sent for each run, by run id. */
  wakes: ReadonlyMap<string, WakeOutcome>;
}

export interface SweepPlan {
  findings: Finding[];
  actions: SweepAction[];
  /** Keys of previous findings whose cause is gone. */
  resolved: string[];
}

/** Wakes that did not help before the watchdog stops waking a run and asks a person instead. */
export const MAX_FAILED_WAKES = 3;

export const findingKey = (runId: string, cause: FindingCause): string => `${runId}\u0000${cause}`;

/** Causes another path normally settles within moments (a wake in flight, a takeover): they count only past the grace. */
const GRACED: ReadonlySet<FindingCause> = new Set(['unclaimed', 'lapsed', 'wait_answered']);

function since(observation: Observation): Date | null {
  switch (observation.cause) {
    case 'unclaimed':
      return observation.admittedAt;
    case 'lapsed':
      return observation.lapsedAt;
    case 'wait_answered':
      return observation.answeredAt;
    case 'wait_lost':
    case 'quarantined':
      return null;
  }
}

function detailOf(observation: Observation): string {
  switch (observation.cause) {
    case 'unclaimed':
      return `admitted at ${observation.admittedAt.toISOString()} and never claimed by a supervisor`;
    case 'lapsed':
      return `the lease of ${observation.holder ?? 'its last holder'} lapsed at ${observation.lapsedAt.toISOString()}`;
    case 'wait_lost':
      return `waits on attention ${observation.attentionId}, which policy no longer has: no answer can wake it`;
    case 'wait_answered':
      return `attention ${observation.attentionId} was ${observation.state} at ${observation.answeredAt.toISOString()}, yet the run still waits on it`;
    case 'quarantined':
      return observation.reason;
  }
}

/** The person's question when waking does not help, or when nothing can be woken. */
function attentionFor(observation: Observation, detail: string): AttentionRequest | null {
  switch (observation.cause) {
    case 'unclaimed':
      return { kind: 'run_without_owner', verb: 'watchdog', arguments: { cause: 'unclaimed', reason: `${detail}; waking it did not help` } };
    case 'wait_answered':
      return { kind: 'wait_lost', verb: 'watchdog', arguments: { cause: 'wait_answered', attentionId: observation.attentionId, reason: `${detail}; waking it did not help` } };
    case 'wait_lost':
      return { kind: 'wait_lost', verb: 'watchdog', arguments: { cause: 'wait_lost', attentionId: observation.attentionId, reason: detail } };
    case 'quarantined':
      // The very request the supervisor makes when it quarantines a run: policy answers that record.
      return { kind: 'run_quarantined', verb: 'replay', arguments: { reason: observation.reason.slice(0, 1_000) } };
    case 'lapsed':
      return null;
  }
}

export function planSweep(input: SweepInput): SweepPlan {
  const findings = new Map<string, Finding>();
  const actions: SweepAction[] = [];

  for (const observation of input.observed) {
    const at = since(observation);
    if (GRACED.has(observation.cause) && at !== null && input.now.getTime() - at.getTime() < input.graceMs) continue;
    const key = findingKey(observation.runId, observation.cause);
    if (findings.has(key)) continue;
    const previous = input.previous.get(key);
    const detail = detailOf(observation);
    const finding: Finding = {
      runId: observation.runId,
      workspaceId: observation.workspaceId,
      cause: observation.cause,
      detail,
      firstSeenAt: previous?.firstSeenAt ?? input.now,
      wakes: previous?.wakes ?? 0,
      failedWakes: previous?.failedWakes ?? 0,
      attentionId: previous?.attentionId ?? null,
    };
    findings.set(key, finding);

    let ask = observation.cause === 'wait_lost' || observation.cause === 'quarantined';
    if (observation.cause === 'unclaimed' || observation.cause === 'wait_answered') {
      const outcome = input.wakes.get(observation.runId);
      // A wake that ran to its end (or failed) and left the cause in place did not help; a busy
      // replica proves nothing about the run, so it is tried again without counting.
      if (previous && (outcome === 'done' || outcome === 'failed')) finding.failedWakes += 1;
      if (outcome !== 'pending') {
        if (finding.failedWakes < MAX_FAILED_WAKES) {
          actions.push({ kind: 'wake', runId: observation.runId, workspaceId: observation.workspaceId });
          finding.wakes += 1;
        } else {
          ask = true;
        }
      }
    }
    const attention = ask && finding.attentionId === null ? attentionFor(observation, detail) : null;
    if (attention) actions.push({ kind: 'raise', key, runId: observation.runId, workspaceId: observation.workspaceId, attention });
  }

  for (const [key, previous] of input.previous) {
    if (!findings.has(key) && input.unchecked.has(key)) findings.set(key, previous);
  }
  const resolved = [...input.previous.keys()].filter((key) => !findings.has(key));
  return { findings: [...findings.values()], actions, resolved };
}

/** Findings per cause, every cause present (a cause with none reads 0). */
export function countByCause(findings: Iterable<Pick<Finding, 'cause'>>): Record<FindingCause, number> {
  const counts = Object.fromEntries(FINDING_CAUSES.map((cause) => [cause, 0])) as Record<FindingCause, number>;
  for (const finding of findings) counts[finding.cause] += 1;
  return counts;
}
