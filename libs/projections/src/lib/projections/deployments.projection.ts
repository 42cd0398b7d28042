import type { DecodedEvent, IntakeEventData } from '@packetagent/contracts';
import { insertOnce, streamId, updateExisting, type Projection, type RowChange } from '../projection';
import type { Row, TableSpec } from '../table';

export const DEPLOYMENTS_TABLE: TableSpec = {
  name: 'deployments',
  columns: [
    { name: 'deployment_id', type: 'text' },
    { name: 'workspace_id', type: 'text' },
    { name: 'worker_id', type: 'text' },
    { name: 'worker_name', type: 'text' },
    { name: 'version', type: 'integer' },
    { name: 'digest', type: 'text' },
    { name: 'effective_digest', type: 'text' },
    { name: 'state', type: 'text' },
    { name: 'state_reason', type: 'text', nullable: true },
    { name: 'max_concurrent_runs', type: 'integer' },
    { name: 'triggers', type: 'jsonb' },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'updated_at', type: 'timestamptz' },
  ],
  primaryKey: ['deployment_id'],
  indexes: [['workspace_id', 'state']],
};

type Trigger = IntakeEventData<'deployment.created'>['triggers'][number];

/** Which triggers a deployment has, without their configuration details. */
function triggerList(triggers: Trigger[]): Row[] {
  return triggers.map((trigger) => ({ triggerId: trigger.triggerId, key: trigger.key, kind: trigger.kind }));
}

/** Deployments with their pinned version and whether they take runs (active, paused, revoked). */
export const deploymentsProjection: Projection = {
  name: 'deployments',
  tables: [DEPLOYMENTS_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    const key = { deployment_id: streamId(event.stream) };
    const touch = (row: Row, changes: Row): Row => ({ ...row, ...changes, updated_at: event.occurredAt });
    switch (event.type) {
      case 'deployment.created': {
        const data = event.data as IntakeEventData<'deployment.created'>;
        return [
          insertOnce('deployments', { deployment_id: data.deploymentId }, {
            deployment_id: data.deploymentId,
            workspace_id: event.workspaceId,
            worker_id: data.workerId,
            worker_name: data.workerName,
            version: data.version,
            digest: data.digest,
            effective_digest: data.effectiveDigest,
            state: 'active',
            state_reason: null,
            max_concurrent_runs: data.maxConcurrentRuns,
            triggers: triggerList(data.triggers),
            created_at: event.occurredAt,
            updated_at: event.occurredAt,
          }),
        ];
      }
      case 'deployment.paused': {
        const data = event.data as IntakeEventData<'deployment.paused'>;
        return [updateExisting('deployments', key, (row) => touch(row, { state: 'paused', state_reason: data.reason }))];
      }
      case 'deployment.resumed':
        return [updateExisting('deployments', key, (row) => touch(row, { state: 'active', state_reason: null }))];
      case 'deployment.revoked': {
        const data = event.data as IntakeEventData<'deployment.revoked'>;
        return [updateExisting('deployments', key, (row) => touch(row, { state: 'revoked', state_reason: data.reason }))];
      }
      case 'deployment.rolled_back':
      case 'deployment.updated': {
        const data = event.data as IntakeEventData<'deployment.rolled_back'>;
        return [
          updateExisting('deployments', key, (row) =>
            touch(row, {
              version: data.version,
              digest: data.digest,
              effective_digest: data.effectiveDigest,
              max_concurrent_runs: data.maxConcurrentRuns,
              triggers: triggerList(data.triggers),
            }),
          ),
        ];
      }
      default:
        return [];
    }
  },
};
