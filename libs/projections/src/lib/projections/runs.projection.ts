import { isTerminal, runIdFromStream, runStateAfter, type DecodedEvent, type IntakeEventData, type RunExecutionEventData } from '@packetagent/contracts';
import type { Projection, RowChange } from '../projection';
import type { Row, TableSpec } from '../table';

export const RUNS_TABLE: TableSpec = {
  name: 'runs',
  columns: [
    { name: 'run_id', type: 'text' },
    { name: 'workspace_id', type: 'text' },
    { name: 'deployment_id', type: 'text' },
    { name: 'worker_id', type: 'text' },
    { name: 'worker_name', type: 'text' },
    { name: 'version', type: 'integer' },
    { name: 'source', type: 'text' },
    { name: 'state', type: 'text' },
    { name: 'hold_reason', type: 'text', nullable: true },
    { name: 'phase', type: 'text', nullable: true },
    { name: 'iteration', type: 'integer' },
    { name: 'tool_calls', type: 'integer' },
    { name: 'cost_usd', type: 'double precision' },
    { name: 'bounds', type: 'jsonb', nullable: true },
    { name: 'remaining', type: 'jsonb', nullable: true },
    { name: 'waiting_reason', type: 'text', nullable: true },
    { name: 'waiting_attention_id', type: 'text', nullable: true },
    { name: 'last_checkpoint_seq', type: 'integer', nullable: true },
    { name: 'last_checkpoint_digest', type: 'text', nullable: true },
    { name: 'last_checkpoint_at', type: 'timestamptz', nullable: true },
    { name: 'outcome_type', type: 'text', nullable: true },
    { name: 'outcome_reason', type: 'text', nullable: true },
    { name: 'outcome_detail', type: 'text', nullable: true },
    { name: 'model', type: 'jsonb', nullable: true },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'started_at', type: 'timestamptz', nullable: true },
    { name: 'ended_at', type: 'timestamptz', nullable: true },
    { name: 'updated_at', type: 'timestamptz' },
  ],
  primaryKey: ['run_id'],
  indexes: [['workspace_id', 'state'], ['workspace_id', 'ended_at']],
};

export type RunPhase = 'plan' | 'act' | 'waiting' | 'ended';

const DETAIL_CHARS = 500;

function clip(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return text.length > DETAIL_CHARS ? `${text.slice(0, DETAIL_CHARS - 1)}…` : text;
}

/** Reason and detail of a terminal event, by type; the type itself is the outcome. */
function outcomeOf(event: DecodedEvent): { reason: string | null; detail: string | null } {
  switch (event.type) {
    case 'run.succeeded':
      return { reason: null, detail: clip((event.data as RunExecutionEventData<'run.succeeded'>).summary) };
    case 'run.failed': {
      const data = event.data as RunExecutionEventData<'run.failed'>;
      return { reason: data.reason, detail: clip(data.detail) };
    }
    case 'run.abandoned': {
      const data = event.data as RunExecutionEventData<'run.abandoned'>;
      return { reason: data.cause, detail: clip(data.detail) };
    }
    case 'run.rejected':
      return { reason: 'approval_rejected', detail: clip((event.data as RunExecutionEventData<'run.rejected'>).reason) };
    case 'run.expired':
      return { reason: 'approval_expired', detail: null };
    case 'run.budget_exhausted':
      return { reason: 'budget_exhausted', detail: clip((event.data as RunExecutionEventData<'run.budget_exhausted'>).detail) };
    case 'run.timed_out':
      return { reason: 'wall_time', detail: (event.data as RunExecutionEventData<'run.timed_out'>).deadline };
    case 'run.cancelled':
      return { reason: 'cancelled', detail: clip((event.data as IntakeEventData<'run.cancelled'>).reason) };
    case 'run.revoked':
      return { reason: 'deployment_revoked', detail: clip((event.data as IntakeEventData<'run.revoked'>).reason) };
    default:
      return { reason: null, detail: null };
  }
}

/**
 * The run row after one event of its stream (pure). The row is created by `run.deferred` or
 * `run.admitted`, always the first event of a run's stream; anything before it changes nothing.
 */
export function evolveRun(current: Row | null, event: DecodedEvent): Row | null {
  const at = event.occurredAt;
  if (event.type === 'run.admitted' || event.type === 'run.deferred') {
    const data = event.data as IntakeEventData<'run.admitted'> & Partial<Pick<IntakeEventData<'run.deferred'>, 'reason'>>;
    if (current) return { ...current, hold_reason: event.type === 'run.deferred' ? data.reason ?? null : null, updated_at: at };
    return {
      run_id: data.runId,
      workspace_id: event.workspaceId,
      deployment_id: data.deploymentId,
      worker_id: data.workerId,
      worker_name: data.workerName,
      version: data.version,
      source: data.activation.source,
      state: 'queued',
      hold_reason: event.type === 'run.deferred' ? data.reason ?? null : null,
      phase: null,
      iteration: 0,
      tool_calls: 0,
      cost_usd: 0,
      bounds: null,
      remaining: null,
      waiting_reason: null,
      waiting_attention_id: null,
      last_checkpoint_seq: null,
      last_checkpoint_digest: null,
      last_checkpoint_at: null,
      outcome_type: null,
      outcome_reason: null,
      outcome_detail: null,
      model: null,
      created_at: at,
      started_at: null,
      ended_at: null,
      updated_at: at,
    };
  }
  if (!current) return null;
  // A terminal run stays as it ended; late control requests do not reopen it.
  if (current['phase'] === 'ended') return current;
  const next: Row = { ...current, updated_at: at };
  switch (event.type) {
    case 'run.started': {
      const data = event.data as RunExecutionEventData<'run.started'>;
      next['started_at'] = current['started_at'] ?? at;
      next['model'] = data.model;
      next['bounds'] = data.bounds;
      next['remaining'] = current['remaining'] ?? {
        iterations: data.bounds.maxIterations,
        toolCalls: data.bounds.maxToolCalls,
        costUsd: data.bounds.maxCostUsd,
        wallSeconds: data.bounds.maxWallSeconds,
      };
      next['phase'] = 'plan';
      next['hold_reason'] = null;
      break;
    }
    case 'run.claimed':
      next['hold_reason'] = null;
      if (current['phase'] === null) next['phase'] = 'plan';
      break;
    case 'run.model_turn': {
      const data = event.data as RunExecutionEventData<'run.model_turn'>;
      next['iteration'] = Math.max(Number(current['iteration']), data.iteration);
      next['cost_usd'] = Number(current['cost_usd']) + data.costUsd;
      next['model'] = data.model;
      next['phase'] = data.toolCalls.length > 0 ? 'act' : 'plan';
      break;
    }
    case 'run.tool_result': {
      const data = event.data as RunExecutionEventData<'run.tool_result'>;
      if (data.executed) next['tool_calls'] = Number(current['tool_calls']) + 1;
      break;
    }
    case 'run.checkpoint': {
      // The supervisor's own count is authoritative: it replaces what the events added up to.
      const data = event.data as RunExecutionEventData<'run.checkpoint'>;
      next['iteration'] = data.iteration;
      next['tool_calls'] = data.toolCalls;
      next['cost_usd'] = data.costUsd;
      next['remaining'] = data.remaining;
      next['last_checkpoint_seq'] = data.seq;
      next['last_checkpoint_digest'] = data.digest;
      next['last_checkpoint_at'] = at;
      if (current['phase'] !== 'waiting') next['phase'] = data.phase;
      break;
    }
    case 'run.waiting': {
      const data = event.data as RunExecutionEventData<'run.waiting'>;
      next['waiting_reason'] = data.reason;
      next['waiting_attention_id'] = data.attentionId;
      next['phase'] = 'waiting';
      break;
    }
    case 'run.migrated':
      // The run goes on under the version it moved to; the read model keeps only the number.
      next['version'] = (event.data as RunExecutionEventData<'run.migrated'>).to.version;
      break;
    case 'run.resumed':
      // An answered approval goes on to act on the call it held; a resumed pause plans again.
      next['phase'] = current['waiting_reason'] === 'approval' ? 'act' : 'plan';
      next['waiting_reason'] = null;
      next['waiting_attention_id'] = null;
      break;
    default:
      break;
  }
  const state = runStateAfter(event.type);
  if (state) next['state'] = state;
  if (state && isTerminal(state)) {
    const outcome = outcomeOf(event);
    next['phase'] = 'ended';
    next['waiting_reason'] = null;
    next['waiting_attention_id'] = null;
    next['outcome_type'] = event.type;
    next['outcome_reason'] = outcome.reason;
    next['outcome_detail'] = outcome.detail;
    next['ended_at'] = at;
  }
  return next;
}

/** One row per run: state, phase, progress against bounds, the last checkpoint and the outcome. */
export const runsProjection: Projection = {
  name: 'runs',
  tables: [RUNS_TABLE],
  changes(event: DecodedEvent): RowChange[] {
    const runId = runIdFromStream(event.stream);
    if (runId === null) return [];
    return [{ table: 'runs', key: { run_id: runId }, evolve: (current) => evolveRun(current, event) }];
  },
};
