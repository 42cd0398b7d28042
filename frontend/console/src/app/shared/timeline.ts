import { formatUsd } from './format';
import { isSuccess, isTerminal, runStateAfter } from './run-vocabulary';

/** One event of a run as GET /runs/{id}/events and the SSE stream carry it. */
export interface RunEvent {
  id: string;
  position: number;
  type: string;
  streamVersion: number;
  occurredAt: string;
  actor: { kind: string; id: string } | null;
  data: Record<string, unknown>;
}

export type EntryKind = 'model' | 'decision' | 'effect' | 'tool' | 'checkpoint' | 'state' | 'outcome' | 'other';

export interface TimelineEntry {
  position: number;
  type: string;
  at: string;
  kind: EntryKind;
  title: string;
  detail: string;
  tone: 'ok' | 'warn' | 'bad' | 'neutral';
  costUsd: number | null;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value);
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * Accepts an event from the page API or an SSE `data:` line. The stream may carry the same
 * item shape or a bare envelope (`globalPosition`, `version`); both read the same here.
 */
export function toRunEvent(raw: unknown, fallbackPosition?: number): RunEvent | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const record = raw as Record<string, unknown>;
  const position = num(record['position']) ?? num(record['globalPosition']) ?? (typeof record['globalPosition'] === 'string' ? Number(record['globalPosition']) : null) ?? fallbackPosition ?? null;
  const type = record['type'];
  if (position === null || !Number.isFinite(position) || typeof type !== 'string') return null;
  const data = typeof record['data'] === 'object' && record['data'] !== null ? (record['data'] as Record<string, unknown>) : {};
  const actor = typeof record['actor'] === 'object' && record['actor'] !== null ? (record['actor'] as { kind: string; id: string }) : null;
  return {
    id: str(record['id']) || String(position),
    position,
    type,
    streamVersion: num(record['streamVersion']) ?? num(record['version']) ?? 0,
    occurredAt: str(record['occurredAt']),
    actor,
    data,
  };
}

/** Adds events to a timeline once each, in position order: a replay after reconnecting repeats nothing. */
export function mergeEvents(existing: readonly RunEvent[], incoming: readonly RunEvent[]): RunEvent[] {
  const byPosition = new Map<number, RunEvent>();
  for (const event of existing) byPosition.set(event.position, event);
  for (const event of incoming) if (!byPosition.has(event.position)) byPosition.set(event.position, event);
  return [...byPosition.values()].sort((a, b) => a.position - b.position);
}

/** What a person reads for each event: model turns, decisions, effects, checkpoints, outcome. */
export function describeEvent(event: RunEvent): TimelineEntry {
  const d = event.data;
  const base = { position: event.position, type: event.type, at: event.occurredAt, costUsd: null as number | null };
  switch (event.type) {
    case 'run.model_turn': {
      const model = (d['model'] ?? {}) as Record<string, unknown>;
      const calls = Array.isArray(d['toolCalls']) ? (d['toolCalls'] as Array<Record<string, unknown>>).map((call) => str(call['name'])) : [];
      const usage = (d['usage'] ?? {}) as Record<string, unknown>;
      const cost = num(d['costUsd']);
      return {
        ...base,
        kind: 'model',
        tone: 'neutral',
        costUsd: cost,
        title: `Model turn ${str(d['iteration'])} (${str(model['provider'])}/${str(model['model'])}${model['scripted'] === true ? ', scripted' : ''})`,
        detail: [str(d['text']), calls.length ? `calls: ${calls.join(', ')}` : '', `${str(usage['inputTokens'])} in / ${str(usage['outputTokens'])} out tokens, ${formatUsd(cost)}`]
          .filter(Boolean)
          .join('\n'),
      };
    }
    case 'run.tool_decided': {
      const decision = str(d['decision']);
      const reason = (d['reason'] ?? {}) as Record<string, unknown>;
      return {
        ...base,
        kind: 'decision',
        tone: decision === 'allow' ? 'ok' : decision === 'deny' ? 'bad' : 'warn',
        title: `Policy: ${decision.replace('_', ' ')} ${str(d['tool'])}${d['verb'] ? ` ${str(d['verb'])}` : ''}`,
        detail: [d['resource'] ? `resource: ${str(d['resource'])}` : '', str(reason['text'])].filter(Boolean).join('\n'),
      };
    }
    case 'effect.prepared':
      return { ...base, kind: 'effect', tone: 'neutral', title: `Effect prepared: ${str(d['tool'])} ${str(d['verb'])}`.trim(), detail: d['resource'] ? `resource: ${str(d['resource'])}` : '' };
    case 'effect.completed':
      return { ...base, kind: 'effect', tone: 'ok', title: 'Effect completed', detail: str(d['summary']) };
    case 'effect.failed': {
      const error = (d['error'] ?? {}) as Record<string, unknown>;
      // Cut off mid-call or lost with the link to a computer: it may have happened, so not "failed".
      if (d['outcomeKnown'] === false) return { ...base, kind: 'effect', tone: 'warn', title: `Effect outcome unknown (${str(error['code'])})`, detail: str(error['message']) };
      return { ...base, kind: 'effect', tone: 'bad', title: `Effect failed (${str(error['code'])})`, detail: str(error['message']) };
    }
    case 'run.tool_result':
      return { ...base, kind: 'tool', tone: d['ok'] === true ? 'ok' : 'bad', title: `Tool result: ${str(d['tool'])} ${d['ok'] === true ? 'ok' : 'failed'}`, detail: str(d['summary']) };
    case 'run.checkpoint':
      return {
        ...base,
        kind: 'checkpoint',
        tone: 'neutral',
        costUsd: num(d['costUsd']),
        title: `Checkpoint ${str(d['seq'])} (${str(d['phase'])})`,
        detail: `iteration ${str(d['iteration'])}, ${str(d['toolCalls'])} tool calls, ${formatUsd(num(d['costUsd']))} so far; digest ${str(d['digest']).slice(0, 12)}`,
      };
    case 'run.waiting':
      return { ...base, kind: 'state', tone: 'warn', title: `Waiting for ${str(d['reason'])}`, detail: d['attentionId'] ? `attention ${str(d['attentionId'])}` : '' };
    case 'run.resumed':
      return { ...base, kind: 'state', tone: 'neutral', title: 'Resumed', detail: str(d['reason']) };
    case 'run.started':
      return { ...base, kind: 'state', tone: 'neutral', title: 'Started', detail: d['deadline'] ? `deadline ${str(d['deadline'])}` : '' };
    case 'run.migrated': {
      const from = (d['from'] ?? {}) as Record<string, unknown>;
      const to = (d['to'] ?? {}) as Record<string, unknown>;
      return {
        ...base,
        kind: 'state',
        tone: 'neutral',
        title: `Migrated from version ${str(from['version'])} to ${str(to['version'])}`,
        detail: [`${str(d['decisionsCompared'])} decisions compared, all the same`, who(d['by']) ? `by ${who(d['by'])}` : ''].filter(Boolean).join('; '),
      };
    }
    case 'run.stop_requested':
    case 'run.pause_requested':
    case 'run.resume_requested':
    case 'run.revoke_requested': {
      // Folded into the run's stream by the supervisor, the request names who asked; recorded by intake, its actor did.
      const by = who(d['requestedBy']) || who(event.actor);
      return { ...base, kind: 'state', tone: 'neutral', title: humanize(event.type), detail: [str(d['reason']), by ? `by ${by}` : ''].filter(Boolean).join('; ') };
    }
    default: {
      const ended = runStateAfter(event.type);
      if (ended !== null && isTerminal(ended)) {
        const detail = str(d['summary']) || str(d['detail']) || str(d['reason']);
        const cause = event.type === 'run.abandoned' && typeof d['cause'] === 'string' ? ` (${ABANDON_CAUSE_WORDS[d['cause']] ?? d['cause'].replaceAll('_', ' ')})` : '';
        return { ...base, kind: 'outcome', tone: isSuccess(ended) ? 'ok' : 'bad', title: `${humanize(event.type)}${cause}`, detail };
      }
      return { ...base, kind: event.type.startsWith('run.') ? 'state' : 'other', tone: 'neutral', title: humanize(event.type), detail: '' };
    }
  }
}

/** Why a run was given up, as `run.abandoned` names it; a cause added later reads as its own words. */
const ABANDON_CAUSE_WORDS: Readonly<Record<string, string>> = {
  uncertain_effect: 'an effect\'s outcome is not known',
  transport_lost: 'the link to a computer broke while a command ran there',
  unreplayable: 'its history cannot be replayed',
  quarantined: 'ended while quarantined',
  unrecordable: 'a step could not be recorded',
};

/** `user 0193…` for an actor-shaped value, or '' for anything else. */
function who(value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  const actor = value as Record<string, unknown>;
  return typeof actor['kind'] === 'string' && typeof actor['id'] === 'string' ? `${actor['kind']} ${actor['id']}` : '';
}

/** `run.criteria_set` → "Criteria set"; other contexts keep their prefix (`effect.x` → "Effect x"). */
function humanize(type: string): string {
  const words = (type.startsWith('run.') ? type.slice(4) : type).replaceAll('_', ' ').replaceAll('.', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Cost of the run so far as its model turns report it. */
export function totalCost(events: readonly RunEvent[]): number {
  return events.reduce((sum, event) => sum + (event.type === 'run.model_turn' ? (num(event.data['costUsd']) ?? 0) : 0), 0);
}
