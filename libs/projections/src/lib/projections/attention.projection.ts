import type { DecodedEvent, PolicyEventData } from '@packetagent/contracts';
import { insertOnce, streamId, updateExisting, type Projection, type RowChange } from '../projection';
import type { Row, TableSpec } from '../table';

export const ATTENTION_TABLE: TableSpec = {
  name: 'attention',
  columns: [
    { name: 'attention_id', type: 'text' },
    { name: 'workspace_id', type: 'text' },
    { name: 'run_id', type: 'text' },
    { name: 'deployment_id', type: 'text' },
    { name: 'tool', type: 'text' },
    { name: 'verb', type: 'text' },
    { name: 'resource', type: 'text', nullable: true },
    { name: 'state', type: 'text' },
    { name: 'requested_at', type: 'timestamptz' },
    { name: 'deadline', type: 'timestamptz' },
    { name: 'answered_at', type: 'timestamptz', nullable: true },
    { name: 'answered_by', type: 'jsonb', nullable: true },
    { name: 'scope', type: 'text', nullable: true },
    { name: 'reason', type: 'text', nullable: true },
  ],
  primaryKey: ['attention_id'],
  indexes: [['workspace_id', 'state']],
};

/** The inbox: what runs wait on a person for, and how each was answered. Arguments stay in the events. */
export const attentionProjection: Projection = {
  name: 'attention',
  tables: [ATTENTION_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    const key = { attention_id: streamId(event.stream) };
    // Only an open record takes an answer: the first answer stands.
    const close = (changes: Row) =>
      updateExisting('attention', key, (row) => (row['state'] === 'open' ? { ...row, ...changes, answered_at: event.occurredAt } : row));
    switch (event.type) {
      case 'attention.requested': {
        const data = event.data as PolicyEventData<'attention.requested'>;
        return [
          insertOnce('attention', { attention_id: data.attentionId }, {
            attention_id: data.attentionId,
            workspace_id: event.workspaceId,
            run_id: data.runId,
            deployment_id: data.deploymentId,
            tool: data.tool,
            verb: data.verb,
            resource: data.resource,
            state: 'open',
            requested_at: event.occurredAt,
            deadline: data.deadline,
            answered_at: null,
            answered_by: null,
            scope: null,
            reason: null,
          }),
        ];
      }
      case 'attention.approved': {
        const data = event.data as PolicyEventData<'attention.approved'>;
        return [close({ state: 'approved', answered_by: data.actor, scope: data.scope })];
      }
      case 'attention.rejected': {
        const data = event.data as PolicyEventData<'attention.rejected'>;
        return [close({ state: 'rejected', answered_by: data.actor, reason: data.reason })];
      }
      case 'attention.expired':
        return [close({ state: 'expired' })];
      case 'attention.withdrawn':
        return [close({ state: 'withdrawn', reason: (event.data as PolicyEventData<'attention.withdrawn'>).reason })];
      default:
        return [];
    }
  },
};
