import type { PoolClient } from 'pg';
import {
  attentionStream,
  type ActorRef,
  type ApprovalRules,
  type AttentionEdit,
  type AttentionScope,
  type AttentionState,
  type AttentionView,
  type JsonObject,
  type JsonValue,
} from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { decide, evolve, type AttentionEvent, type ExistingAttention, type RecordedApproval } from './attention.decider';

export interface AttentionRow {
  attention_id: string;
  workspace_id: string;
  run_id: string;
  deployment_id: string;
  version_digest: string;
  call_digest: string;
  tool: string;
  verb: string;
  resource: string | null;
  resource_key: string;
  approval_mode: 'always' | 'first_use';
  arguments: JsonValue;
  requester: ActorRef;
  state: AttentionState;
  scope: AttentionScope | null;
  answered_by: ActorRef | null;
  answer_reason: string | null;
  deadline: Date;
  answered_at: Date | null;
  consumed_at: Date | null;
  timer_set: boolean;
  stream_version: string;
  created_at: Date;
  rules: ApprovalRules | null;
  approvals: RecordedApproval[];
  remind_at: Date | null;
  reminded_at: Date | null;
  escalate_at: Date | null;
  escalated_at: Date | null;
  edit: AttentionEdit | null;
  /** The edited call's arguments as the approver gave them: what the run runs. */
  edited_arguments: JsonObject | null;
  edited_call_digest: string | null;
  edited_verb: string | null;
  edited_resource_key: string | null;
}

/** What an edit approved with the call changes besides the event: the call to allow instead. */
export interface ApprovedEdit {
  edit: AttentionEdit;
  arguments: JsonObject;
  verb: string;
  resourceKey: string;
}

type Queryable = Pick<PoolClient, 'query'>;

export function attentionState(row: AttentionRow): ExistingAttention {
  return {
    status: row.state,
    attentionId: row.attention_id,
    deadline: row.deadline.toISOString(),
    scope: row.scope,
    version: Number(row.stream_version),
    rules: row.rules,
    approvals: row.approvals,
    remindedAt: row.reminded_at?.toISOString() ?? null,
    escalatedAt: row.escalated_at?.toISOString() ?? null,
  };
}

export function attentionView(row: AttentionRow): AttentionView {
  return {
    id: row.attention_id,
    workspaceId: row.workspace_id,
    runId: row.run_id,
    deploymentId: row.deployment_id,
    versionDigest: row.version_digest,
    tool: row.tool,
    verb: row.verb,
    resource: row.resource,
    arguments: row.arguments,
    requester: row.requester,
    state: row.state,
    scope: row.scope,
    answeredBy: row.answered_by,
    reason: row.answer_reason,
    deadline: row.deadline.toISOString(),
    createdAt: row.created_at.toISOString(),
    answeredAt: row.answered_at ? row.answered_at.toISOString() : null,
    consumed: row.consumed_at !== null,
    version: Number(row.stream_version),
    rules: row.rules,
    approvals: row.approvals,
    remindAt: row.remind_at?.toISOString() ?? null,
    remindedAt: row.reminded_at?.toISOString() ?? null,
    escalateAt: row.escalate_at?.toISOString() ?? null,
    escalatedAt: row.escalated_at?.toISOString() ?? null,
    edit: row.edit,
  };
}

export async function readAttention(db: Queryable, attentionId: string): Promise<AttentionRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(attentionId)) return null;
  const { rows } = await db.query<AttentionRow>(`SELECT * FROM policy.attention WHERE attention_id = $1`, [attentionId]);
  return rows[0] ?? null;
}

/**
 * Appends answer events at the version the row was read at and writes the outcome back, in the
 * caller's transaction. A writer that got in first makes the append fail with a
 * ConcurrencyError: the attention stream's version decides every race.
 */
export async function commitAnswer(
  store: PostgresEventStore,
  client: PoolClient,
  row: AttentionRow,
  events: AttentionEvent[],
  actor: ActorRef,
  approvedEdit?: ApprovedEdit,
): Promise<AttentionRow> {
  const before = attentionState(row);
  const appended = await store.append(
    attentionStream(row.attention_id),
    before.version,
    events.map((event) => ({ type: event.type, data: event.data, actor })),
    { workspaceId: row.workspace_id, client },
  );
  const after = events.reduce<ExistingAttention>((state, event) => evolve(state, event), before);
  const closing = events.find((event) => event.type !== 'attention.approval_recorded' && event.type !== 'attention.reminded' && event.type !== 'attention.escalated');
  const answeredBy = closing?.type === 'attention.approved' || closing?.type === 'attention.rejected' ? closing.data.actor : null;
  const reason = closing?.type === 'attention.rejected' || closing?.type === 'attention.withdrawn' ? closing.data.reason : null;
  const edit = closing?.type === 'attention.approved' && closing.data.edit && approvedEdit ? approvedEdit : null;
  const { rows } = await client.query<AttentionRow>(
    `UPDATE policy.attention
        SET state = $2, scope = $3, stream_version = $4, approvals = $5::jsonb, reminded_at = $6, escalated_at = $7,
            answered_by = CASE WHEN $8 THEN $9::jsonb ELSE answered_by END,
            answer_reason = CASE WHEN $8 THEN $10 ELSE answer_reason END,
            answered_at = CASE WHEN $8 THEN now() ELSE answered_at END,
            edit = $11::jsonb, edited_arguments = $12::jsonb, edited_call_digest = $13, edited_verb = $14, edited_resource_key = $15
      WHERE attention_id = $1 RETURNING *`,
    [
      row.attention_id, after.status, after.scope, appended.streamVersion, JSON.stringify(after.approvals), after.remindedAt, after.escalatedAt,
      closing !== undefined, answeredBy ? JSON.stringify(answeredBy) : null, reason,
      edit ? JSON.stringify(edit.edit) : null, edit ? JSON.stringify(edit.arguments) : null, edit?.edit.editedDigest ?? null, edit?.verb ?? null, edit?.resourceKey ?? null,
    ],
  );
  const updated = rows[0]!;
  if (after.status === 'approved') {
    // Approve-for-run, and any approval of a first use, covers identical calls for the rest of the run
    // (of an edited call, calls identical to the edit).
    if (after.scope === 'run' || updated.approval_mode === 'first_use') {
      await client.query(
        `INSERT INTO policy.run_approvals (run_id, tool, verb, resource_key, attention_id) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT DO NOTHING`,
        [updated.run_id, updated.tool, updated.edited_verb ?? updated.verb, updated.edited_resource_key ?? updated.resource_key, updated.attention_id],
      );
    }
  }
  return updated;
}

/**
 * Closes every open attention of a revoked deployment inside the caller's transaction. An
 * operator's answer committed first makes the append fail; the caller's whole transaction is
 * then retried and finds that attention answered.
 */
export async function withdrawOpenAttention(store: PostgresEventStore, client: PoolClient, deploymentId: string, reason: string, actor: ActorRef): Promise<number> {
  const { rows } = await client.query<AttentionRow>(`SELECT * FROM policy.attention WHERE deployment_id = $1 AND state = 'open' ORDER BY attention_id`, [deploymentId]);
  let withdrawn = 0;
  for (const row of rows) {
    const events = decide({ kind: 'withdraw', reason }, attentionState(row));
    if (events.length === 0) continue;
    await commitAnswer(store, client, row, events, actor);
    withdrawn++;
  }
  return withdrawn;
}

