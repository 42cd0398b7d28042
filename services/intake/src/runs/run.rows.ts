import type { ActivationResult, ActivationSource, HoldReason, RunState, RunView } from '@packetagent/contracts';

export interface RunRow {
  id: string;
  workspace_id: string;
  deployment_id: string;
  worker_id: string;
  version: number;
  digest: string;
  state: RunState;
  hold: HoldReason | null;
  stop_requested: boolean;
  pause_requested: boolean;
  source: ActivationSource;
  trigger_id: string | null;
  activation_id: string;
  dedupe_key: string;
  stream_version: string;
  created_at: Date;
  updated_at: Date;
}

export function runView(row: RunRow): RunView {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    workerId: row.worker_id,
    version: row.version,
    digest: row.digest.trim(),
    state: row.state,
    hold: row.hold,
    stopRequested: row.stop_requested,
    pauseRequested: row.pause_requested,
    source: row.source,
    triggerId: row.trigger_id,
    activationId: row.activation_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function activationResult(row: RunRow, duplicate: boolean): ActivationResult {
  return { runId: row.id, activationId: row.activation_id, deploymentId: row.deployment_id, state: row.state, hold: row.hold, duplicate };
}
