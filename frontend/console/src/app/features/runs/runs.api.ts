/** GET /runs/{id}, served by intake. */
export interface Run {
  id: string;
  deploymentId: string;
  workerId: string;
  version: number;
  digest: string;
  state: string;
  hold: string | null;
  stopRequested: boolean;
  pauseRequested: boolean;
  source: string;
  triggerId: string | null;
  activationId: string;
  createdAt: string;
  updatedAt: string;
}

/** GET /runs/{id}/summary, served by the projector's read model. */
export interface RunSummary {
  runId: string;
  deploymentId: string;
  workerName: string;
  version: number;
  state: string;
  phase: string;
  iteration: number;
  toolCalls: number;
  costUsd: number;
  bounds: { maxWallSeconds: number; maxIterations: number; maxToolCalls: number; maxCostUsd: number | null } | null;
  remaining: { iterations: number; toolCalls: number; costUsd: number | null; wallSeconds: number } | null;
  /** What a waiting run waits on (WAIT_REASONS of libs/contracts run.events.v1.ts), and the attention record that answers it. */
  waitingOn: { reason: string; attentionId: string | null } | null;
  lastCheckpoint: { seq: number; digest: string; at: string } | null;
  outcome: { type: string; reason: string | null; detail: string | null } | null;
  model: { provider: string; model: string; scripted: boolean } | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}

/** GET /workspaces/{ws}/run-facts?ids=...: what the runs list shows beside intake's fields. */
export interface RunFacts {
  runId: string;
  workerId: string;
  workerName: string;
  deploymentId: string;
  version: number;
  costUsd: number;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number;
}

/** GET /runs/{id}/supervision, served by the supervisor: its hold on the run. */
export interface RunSupervision {
  runId: string;
  status: 'unclaimed' | 'active' | 'waiting' | 'terminal' | 'quarantined';
  quarantineReason: string | null;
  waitingOn: string | null;
  claims: number;
  updatedAt: string | null;
}

/** POST /runs/{id}/release: what became of the release by the time it answered. */
export interface ReleaseRunResult extends RunSupervision {
  outcome: 'resumed' | 'quarantined' | 'pending';
}

/** POST /runs/{id}/end {reason}: the run ended abandoned (cause quarantined). */
export interface EndRunResult extends RunSupervision {
  endedAtVersion: number;
}
