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
  bounds: Record<string, unknown> | null;
  remaining: Record<string, unknown> | null;
  waitingOn: string | null;
  lastCheckpoint: { seq: number; digest: string; at: string } | null;
  outcome: { type: string; reason: string | null; detail: string | null } | null;
  model: { provider: string; model: string; scripted: boolean } | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}
