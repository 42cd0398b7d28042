import { runIdFromStream, type DecodedEvent, type IntakeEventData, type JsonValue, type RunExecutionEventData } from '@packetagent/contracts';
import { insertOnce, type Projection, type RowChange } from '../projection';
import type { TableSpec } from '../table';
import { payloadSummary } from './payload-summary';

export const RUN_TIMELINE_TABLE: TableSpec = {
  name: 'run_timeline',
  columns: [
    { name: 'global_position', type: 'bigint' },
    { name: 'workspace_id', type: 'text' },
    { name: 'run_id', type: 'text' },
    { name: 'stream_version', type: 'integer' },
    { name: 'type', type: 'text' },
    { name: 'occurred_at', type: 'timestamptz' },
    { name: 'summary', type: 'jsonb' },
  ],
  primaryKey: ['global_position'],
  indexes: [['run_id', 'stream_version']],
};

const TEXT_CHARS = 200;

function short(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return text.length > TEXT_CHARS ? `${text.slice(0, TEXT_CHARS - 1)}…` : text;
}

/**
 * Who asked for a folded operator request and where it sits in the run's control stream; a
 * request recorded before requests were folded has neither.
 */
function requestFields(data: { controlVersion?: number; requestedBy?: { kind: string; id: string } }): { [key: string]: JsonValue } {
  return { ...(data.requestedBy ? { requestedBy: data.requestedBy } : {}), ...(data.controlVersion ? { controlVersion: data.controlVersion } : {}) };
}

/**
 * A few fields that tell what happened, for a timeline line. Event data is redacted before it
 * is appended; this keeps only names, decisions, counts and bounded texts, never tool output,
 * arguments or model text.
 */
export function summarizeRunEvent(event: DecodedEvent): { [key: string]: JsonValue } {
  switch (event.type) {
    case 'run.admitted':
    case 'run.deferred': {
      const data = event.data as IntakeEventData<'run.admitted'> & { reason?: string };
      return { workerName: data.workerName, version: data.version, source: data.activation.source, ...(data.reason ? { hold: data.reason } : {}) };
    }
    case 'run.started': {
      const data = event.data as RunExecutionEventData<'run.started'>;
      return { model: data.model, tools: data.tools, deadline: data.deadline };
    }
    case 'run.claimed': {
      const data = event.data as RunExecutionEventData<'run.claimed'>;
      return { claim: data.claim, fromCheckpoint: data.fromCheckpoint };
    }
    case 'run.model_turn': {
      const data = event.data as RunExecutionEventData<'run.model_turn'>;
      return {
        iteration: data.iteration,
        toolCalls: data.toolCalls.map((call) => call.name),
        stopReason: data.stopReason,
        inputTokens: data.usage.inputTokens,
        outputTokens: data.usage.outputTokens,
        costUsd: data.costUsd,
        durationMs: data.durationMs,
      };
    }
    case 'run.tool_decided': {
      const data = event.data as RunExecutionEventData<'run.tool_decided'>;
      return { callId: data.callId, tool: data.tool, verb: data.verb, resource: data.resource, decision: data.decision, reason: data.reason.code, attentionId: data.attentionId };
    }
    case 'effect.prepared': {
      const data = event.data as RunExecutionEventData<'effect.prepared'>;
      return { effectId: data.effectId, callId: data.callId, tool: data.tool, verb: data.verb, resource: data.resource, attempt: data.attempt };
    }
    case 'effect.completed': {
      const data = event.data as RunExecutionEventData<'effect.completed'>;
      return { effectId: data.effectId, callId: data.callId, summary: short(data.summary) };
    }
    case 'effect.failed': {
      const data = event.data as RunExecutionEventData<'effect.failed'>;
      return { effectId: data.effectId, callId: data.callId, error: data.error.code, outcomeKnown: data.outcomeKnown };
    }
    case 'run.tool_result': {
      const data = event.data as RunExecutionEventData<'run.tool_result'>;
      return { callId: data.callId, tool: data.tool, ok: data.ok, executed: data.executed, summary: short(data.summary) };
    }
    case 'run.criteria_set':
      return { criteria: (event.data as RunExecutionEventData<'run.criteria_set'>).criteria.length };
    case 'run.compacted':
      return { droppedMessages: (event.data as RunExecutionEventData<'run.compacted'>).droppedMessages };
    case 'run.waiting': {
      const data = event.data as RunExecutionEventData<'run.waiting'>;
      return { reason: data.reason, attentionId: data.attentionId };
    }
    case 'run.resumed':
      return { reason: (event.data as RunExecutionEventData<'run.resumed'>).reason };
    case 'run.budget_requested': {
      const data = event.data as RunExecutionEventData<'run.budget_requested'>;
      return { attentionId: data.attentionId, requestedUsd: data.requestedUsd, spentUsd: data.spentUsd, limitUsd: data.limitUsd };
    }
    case 'run.budget_raised': {
      const data = event.data as RunExecutionEventData<'run.budget_raised'>;
      return { attentionId: data.attentionId, raisedUsd: data.raisedUsd, limitUsd: data.limitUsd, approvedBy: data.approvedBy?.id ?? null };
    }
    case 'run.checkpoint': {
      const data = event.data as RunExecutionEventData<'run.checkpoint'>;
      return { seq: data.seq, phase: data.phase, iteration: data.iteration, toolCalls: data.toolCalls, costUsd: data.costUsd };
    }
    case 'run.succeeded':
      return { summary: short((event.data as RunExecutionEventData<'run.succeeded'>).summary) };
    case 'run.failed': {
      const data = event.data as RunExecutionEventData<'run.failed'>;
      return { reason: data.reason, detail: short(data.detail) };
    }
    case 'run.abandoned': {
      const data = event.data as RunExecutionEventData<'run.abandoned'>;
      return { cause: data.cause, detail: short(data.detail), attentionId: data.attentionId };
    }
    case 'run.rejected':
    case 'run.expired':
      return { attentionId: (event.data as { attentionId: string }).attentionId };
    case 'run.budget_exhausted':
      return { detail: short((event.data as RunExecutionEventData<'run.budget_exhausted'>).detail) };
    case 'run.timed_out':
      return { deadline: (event.data as RunExecutionEventData<'run.timed_out'>).deadline };
    case 'run.cancelled':
    case 'run.revoked':
      return { reason: short((event.data as { reason: string | null }).reason) };
    case 'run.stop_requested':
    case 'run.pause_requested':
    case 'run.revoke_requested':
      return { reason: short((event.data as { reason: string | null }).reason), ...requestFields(event.data as IntakeEventData<'run.stop_requested'>) };
    case 'run.resume_requested':
      return requestFields(event.data as IntakeEventData<'run.resume_requested'>);
    case 'run.migrated': {
      const data = event.data as RunExecutionEventData<'run.migrated'>;
      return { from: data.from.version, to: data.to.version, digest: data.to.digest, decisionsCompared: data.decisionsCompared, by: data.by };
    }
    default:
      return {};
  }
}

/** One line per event of a run's stream, in stream order; a field stored by reference is listed with its size and digest (`payloads`). */
export const runTimelineProjection: Projection = {
  name: 'run_timeline',
  tables: [RUN_TIMELINE_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    const runId = runIdFromStream(event.stream);
    if (runId === null) return [];
    return [
      insertOnce('run_timeline', { global_position: event.globalPosition }, {
        global_position: event.globalPosition,
        workspace_id: event.workspaceId,
        run_id: runId,
        stream_version: event.streamVersion,
        type: event.type,
        occurred_at: event.occurredAt,
        summary: { ...summarizeRunEvent(event), ...payloadSummary(event.data) },
      }),
    ];
  },
};
