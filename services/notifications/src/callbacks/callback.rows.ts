import type { CallbackView, RemoteAction } from '@packetagent/contracts';
import type { PoolClient, Pool } from 'pg';

export interface CallbackRow {
  callback_id: string;
  workspace_id: string;
  delivery_id: string;
  action: RemoteAction;
  target_kind: 'attention' | 'run';
  target_id: string;
  run_id: string | null;
  role: 'viewer' | 'member' | 'admin';
  recipient: string;
  worker_name: string;
  deployment_id: string | null;
  version_digest: string | null;
  summary: string;
  expires_at: Date;
  used_at: Date | null;
  outcome: string | null;
}

export async function readCallback(db: Pool | PoolClient, callbackId: string, lock = false): Promise<CallbackRow | null> {
  const { rows } = await db.query<CallbackRow>(`SELECT * FROM notifications.callbacks WHERE callback_id = $1${lock ? ' FOR UPDATE' : ''}`, [callbackId]);
  return rows[0] ?? null;
}

export function callbackState(row: CallbackRow, now: Date): CallbackView['state'] {
  if (row.used_at) return 'used';
  return now.getTime() >= row.expires_at.getTime() ? 'expired' : 'usable';
}

export function callbackView(row: CallbackRow, now: Date, detail: CallbackView['detail']): CallbackView {
  return {
    callbackId: row.callback_id,
    workspaceId: row.workspace_id,
    action: row.action,
    target: { kind: row.target_kind, id: row.target_id },
    state: callbackState(row, now),
    expiresAt: row.expires_at.toISOString(),
    worker: { name: row.worker_name, deploymentId: row.deployment_id, versionDigest: row.version_digest },
    summary: row.summary,
    detail,
  };
}
