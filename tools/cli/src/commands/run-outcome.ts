import { z } from 'zod';
import { isRunState, isRunTerminalEventType, isTerminal } from '@packetagent/contracts';
import type { ApiClient } from '../api-client';
import { ApiError } from '../errors';

const ActorSchema = z.looseObject({ kind: z.string(), id: z.string() });
type Actor = z.infer<typeof ActorSchema>;

export const RunEventSchema = z.looseObject({
  position: z.number(),
  type: z.string(),
  streamVersion: z.number(),
  occurredAt: z.string(),
  actor: ActorSchema.optional(),
  data: z.unknown(),
});
export type RunEvent = z.infer<typeof RunEventSchema>;

const RunEventsPageSchema = z.object({ items: z.array(RunEventSchema), nextCursor: z.string().nullable() });

/**
 * Every page of a run's events, in order. Fields stored by reference stay references, so a large
 * tool result is never fetched to print one line.
 */
export async function* runEvents(client: ApiClient, runId: string): AsyncGenerator<RunEvent> {
  let cursor: string | undefined;
  for (;;) {
    const page = await client.get(client.workspacePath('runs', runId, 'events'), RunEventsPageSchema, { after: cursor, limit: '500', payloads: 'ref' });
    yield* page.items;
    if (!page.nextCursor) return;
    cursor = page.nextCursor;
  }
}

/** Why a run ended, and who ended it when a person did. */
export interface RunOutcome {
  event: string;
  reason: string;
  by: Actor | null;
}

const AttentionAnswerSchema = z.looseObject({ id: z.string(), state: z.string(), reason: z.string().nullish(), answeredBy: ActorSchema.nullish() });

export function actorName(actor: Actor): string {
  return `${actor.kind.replace(/_/g, ' ')} ${actor.id}`;
}

/** The rejection is the person's: the attention record says who answered and why; the run's event only that it was rejected. */
async function rejection(client: ApiClient, attentionId: string, fallback: string): Promise<{ reason: string; by: Actor | null }> {
  try {
    const attention = await client.get(client.workspacePath('attention', attentionId), AttentionAnswerSchema);
    return { reason: attention.reason || fallback, by: attention.answeredBy ?? null };
  } catch (error) {
    if (error instanceof ApiError) return { reason: fallback, by: null };
    throw error;
  }
}

const text = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
const joined = (...parts: unknown[]): string => parts.map(text).filter(Boolean).join(': ');

/** The outcome a terminal event records; null for any other event. */
export async function outcomeOf(client: ApiClient, event: RunEvent): Promise<RunOutcome | null> {
  if (!isRunTerminalEventType(event.type)) return null;
  const data = (event.data ?? {}) as Record<string, unknown>;
  const by = event.actor && event.actor.kind !== 'service' && event.actor.kind !== 'system' ? event.actor : null;
  const outcome = (reason: string, who: Actor | null = by): RunOutcome => ({ event: event.type, reason, by: who });
  switch (event.type) {
    case 'run.succeeded':
      return outcome(text(data['summary']));
    case 'run.failed':
      return outcome(joined(data['reason'], data['detail']));
    case 'run.abandoned':
      return outcome(joined(data['cause'], data['detail']));
    case 'run.rejected': {
      const attentionId = text(data['attentionId']);
      const answer = await rejection(client, attentionId, text(data['reason']));
      return outcome(`attention ${attentionId} rejected: ${answer.reason}`, answer.by);
    }
    case 'run.expired':
      return outcome(`attention ${text(data['attentionId'])} expired unanswered`);
    case 'run.timed_out':
      return outcome(`the deadline ${text(data['deadline'])} passed`);
    case 'run.budget_exhausted':
      return outcome(text(data['detail']));
    default:
      // cancelled, revoked, and any terminal event added later: they carry a reason.
      return outcome(text(data['reason']) || text(data['detail']));
  }
}

/** The outcome of a run in a terminal state, from its last terminal event; null while the run is active. */
export async function runOutcome(client: ApiClient, runId: string, state: string): Promise<RunOutcome | null> {
  // A state this CLI does not know is read as over, as the server reads it.
  if (isRunState(state) && !isTerminal(state)) return null;
  let last: RunEvent | undefined;
  for await (const event of runEvents(client, runId)) if (isRunTerminalEventType(event.type)) last = event;
  return last ? outcomeOf(client, last) : null;
}

/** One line: the reason, and who when a person ended the run. */
export function outcomeText(outcome: RunOutcome): string {
  return `${outcome.reason || '-'}${outcome.by ? ` (by ${actorName(outcome.by)})` : ''}`;
}
