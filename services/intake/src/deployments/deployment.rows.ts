import type { DeploymentView, TriggerBinding } from '@packetagent/contracts';
import type { DeploymentStatus } from './deployment.decider';

export interface DeploymentRow {
  id: string;
  workspace_id: string;
  worker_id: string;
  worker_name: string;
  version: number;
  digest: string;
  effective_digest: string;
  effective: unknown;
  overrides: unknown;
  triggers: TriggerBinding[];
  status: DeploymentStatus;
  status_reason: string | null;
  max_concurrent_runs: number;
  active_runs: number;
  held_runs: number;
  stream_version: string;
  request_key: string | null;
  request_digest: string | null;
  created_at: Date;
  updated_at: Date;
}

export function deploymentView(row: DeploymentRow): DeploymentView {
  return {
    id: row.id,
    workerId: row.worker_id,
    workerName: row.worker_name,
    version: row.version,
    digest: row.digest.trim(),
    effectiveDigest: row.effective_digest.trim(),
    overrides: row.overrides as DeploymentView['overrides'],
    status: row.status,
    statusReason: row.status_reason,
    maxConcurrentRuns: row.max_concurrent_runs,
    activeRuns: row.active_runs,
    heldRuns: row.held_runs,
    triggers: row.triggers,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const lockDeployment = `SELECT * FROM intake.deployments WHERE id = $1 AND workspace_id = $2 FOR UPDATE`;
