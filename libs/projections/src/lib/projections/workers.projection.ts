import type { DecodedEvent, IntakeEventData } from '@packetagent/contracts';
import { insertOnce, updateExisting, type Projection, type RowChange } from '../projection';
import type { TableSpec } from '../table';

export const WORKERS_TABLE: TableSpec = {
  name: 'workers',
  columns: [
    { name: 'worker_id', type: 'text' },
    { name: 'workspace_id', type: 'text' },
    { name: 'name', type: 'text' },
    { name: 'description', type: 'text' },
    { name: 'latest_version', type: 'integer', nullable: true },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'updated_at', type: 'timestamptz' },
  ],
  primaryKey: ['worker_id'],
  indexes: [['workspace_id', 'name']],
};

/** Workers and the newest version each has. */
export const workersProjection: Projection = {
  name: 'workers',
  tables: [WORKERS_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    if (event.type === 'worker.created') {
      const data = event.data as IntakeEventData<'worker.created'>;
      return [
        insertOnce('workers', { worker_id: data.workerId }, {
          worker_id: data.workerId,
          workspace_id: event.workspaceId,
          name: data.name,
          description: data.description,
          latest_version: null,
          created_at: event.occurredAt,
          updated_at: event.occurredAt,
        }),
      ];
    }
    if (event.type === 'worker.version_created') {
      const data = event.data as IntakeEventData<'worker.version_created'>;
      return [
        updateExisting('workers', { worker_id: data.workerId }, (row) => ({
          ...row,
          latest_version: Math.max(Number(row['latest_version'] ?? 0), data.version),
          updated_at: event.occurredAt,
        })),
      ];
    }
    return [];
  },
};

export const VERSIONS_TABLE: TableSpec = {
  name: 'versions',
  columns: [
    { name: 'worker_id', type: 'text' },
    { name: 'version', type: 'integer' },
    { name: 'workspace_id', type: 'text' },
    { name: 'digest', type: 'text' },
    { name: 'created_at', type: 'timestamptz' },
  ],
  primaryKey: ['worker_id', 'version'],
  indexes: [['workspace_id']],
};

/** Immutable worker versions (the definition itself stays in the events). */
export const versionsProjection: Projection = {
  name: 'versions',
  tables: [VERSIONS_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    if (event.type !== 'worker.version_created') return [];
    const data = event.data as IntakeEventData<'worker.version_created'>;
    return [
      insertOnce('versions', { worker_id: data.workerId, version: data.version }, {
        worker_id: data.workerId,
        version: data.version,
        workspace_id: event.workspaceId,
        digest: data.digest,
        created_at: event.occurredAt,
      }),
    ];
  },
};
