import { isTerminal, runStateAfter } from '../../shared/run-vocabulary';
import type { RunEvent } from '../../shared/timeline';

export type SpanKind = 'queue' | 'model' | 'tool' | 'wait';

/** One step of a run on its time axis, as trace views show spans. */
export interface Span {
  key: string;
  kind: SpanKind;
  label: string;
  startMs: number;
  endMs: number;
  /** Still going (an active run's current step), drawn up to now. */
  open: boolean;
  costUsd: number | null;
}

export interface Waterfall {
  startMs: number;
  endMs: number;
  spans: Span[];
}

const TOOL_ENDS = new Set(['run.tool_result']);

function at(event: RunEvent): number {
  return Date.parse(event.occurredAt);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The run's steps as spans, from its events alone: the time it was queued (admitted to
 * started), each model call (its recorded duration, ending when the turn was recorded), each
 * tool call (from the moment it could run, after any approval, to its result) and each wait
 * (waiting to resumed). `nowMs` ends what is still open.
 */
export function buildWaterfall(events: readonly RunEvent[], nowMs: number): Waterfall {
  const spans: Span[] = [];
  const timed = events.filter((event) => !Number.isNaN(at(event)));
  if (timed.length === 0) return { startMs: nowMs, endMs: nowMs, spans };
  const ended = timed.some((event) => {
    const state = runStateAfter(event.type);
    return state !== null && isTerminal(state);
  });
  const lastMs = at(timed.at(-1)!);
  const horizon = ended ? lastMs : Math.max(lastMs, nowMs);
  const toolNames = new Map<string, string>();
  const toolStarts = new Map<string, number>();
  let admittedAt: number | null = null;
  let waiting: { since: number; label: string; position: number } | null = null;

  const closeWait = (endMs: number, open: boolean) => {
    if (!waiting) return;
    spans.push({ key: `wait-${waiting.position}`, kind: 'wait', label: waiting.label, startMs: waiting.since, endMs, open, costUsd: null });
    waiting = null;
  };

  for (const event of timed) {
    const t = at(event);
    const d = event.data;
    switch (event.type) {
      case 'run.admitted':
      case 'run.deferred':
        admittedAt ??= t;
        break;
      case 'run.started':
        if (admittedAt !== null && spans.every((span) => span.kind !== 'queue')) {
          spans.push({ key: 'queue', kind: 'queue', label: 'Queued', startMs: admittedAt, endMs: t, open: false, costUsd: null });
        }
        break;
      case 'run.model_turn': {
        const duration = typeof d['durationMs'] === 'number' && Number.isFinite(d['durationMs']) ? Math.max(0, d['durationMs']) : 0;
        const model = (d['model'] ?? {}) as Record<string, unknown>;
        spans.push({
          key: `model-${event.position}`,
          kind: 'model',
          label: `Model turn ${String(d['iteration'] ?? '')} (${text(model['model']) || 'model'})`.replace(' ()', ''),
          startMs: t - duration,
          endMs: t,
          open: false,
          costUsd: typeof d['costUsd'] === 'number' ? d['costUsd'] : null,
        });
        if (Array.isArray(d['toolCalls'])) {
          for (const call of d['toolCalls'] as Array<Record<string, unknown>>) {
            const id = text(call['id']);
            if (id) toolNames.set(id, text(call['name']));
          }
        }
        break;
      }
      case 'run.tool_decided': {
        const callId = text(d['callId']);
        if (callId) {
          toolNames.set(callId, text(d['tool']) || toolNames.get(callId) || 'tool');
          if (d['decision'] === 'allow') toolStarts.set(callId, t);
        }
        break;
      }
      case 'effect.prepared': {
        const callId = text(d['callId']);
        if (callId && !toolStarts.has(callId)) toolStarts.set(callId, t);
        break;
      }
      case 'run.waiting': {
        closeWait(t, false);
        const reason = text(d['reason']);
        const tool = toolNames.get(text(d['callId']));
        const label = reason === 'approval' ? `Waiting for approval${tool ? ` of ${tool}` : ''}` : reason === 'paused' ? 'Paused' : `Waiting for ${reason.replaceAll('_', ' ') || 'something'}`;
        waiting = { since: t, label, position: event.position };
        break;
      }
      case 'run.resumed':
        closeWait(t, false);
        break;
      default:
        if (TOOL_ENDS.has(event.type)) {
          const callId = text(d['callId']);
          const start = toolStarts.get(callId) ?? t;
          spans.push({ key: `tool-${callId || event.position}`, kind: 'tool', label: `Tool call: ${text(d['tool']) || toolNames.get(callId) || 'tool'}${d['ok'] === false ? ' (failed)' : ''}`, startMs: start, endMs: t, open: false, costUsd: null });
          toolStarts.delete(callId);
        }
    }
  }
  closeWait(horizon, !ended);
  // Calls that started and have no result yet: running now, or cut off by the run's end.
  for (const [callId, start] of toolStarts) {
    spans.push({ key: `tool-${callId}`, kind: 'tool', label: `Tool call: ${toolNames.get(callId) ?? 'tool'}`, startMs: start, endMs: horizon, open: !ended, costUsd: null });
  }
  spans.sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs);
  const startMs = Math.min(at(timed[0]!), ...spans.map((span) => span.startMs));
  return { startMs, endMs: Math.max(horizon, ...spans.map((span) => span.endMs)), spans };
}
