import type { DecodedEvent } from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import type { AttentionFacts } from '../channels/channel';
import { attentionKind } from './compose-message';

const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

export interface SourceFacts {
  runId: string;
  attention: AttentionFacts | null;
  /** `attention.escalated`: the route it goes to. */
  escalateTo: string | null;
}

/** The run (and attention) a source event is about, read from the streams that name it; null when it concerns no run. */
export async function sourceFacts(store: PostgresEventStore, event: DecodedEvent): Promise<SourceFacts | null> {
  const data = record(event.data);
  if (event.type.startsWith('attention.')) {
    const requested = event.type === 'attention.requested' ? data : record((await store.readStream(event.stream, { limit: 1 }))[0]?.data);
    const runId = requested['runId'];
    if (typeof runId !== 'string') return null;
    const attention: AttentionFacts = {
      id: String(requested['attentionId']),
      kind: attentionKind(requested),
      tool: String(requested['tool']),
      verb: String(requested['verb']),
      resource: typeof requested['resource'] === 'string' ? requested['resource'] : null,
      deadline: String(requested['deadline']),
    };
    return { runId, attention, escalateTo: typeof data['to'] === 'string' ? data['to'] : null };
  }
  if (event.type.startsWith('run.')) return { runId: event.stream.slice('run-'.length), attention: null, escalateTo: null };
  if (event.type === 'budget.warning') {
    const scope = record(data['scope']);
    if (scope['kind'] === 'run' && typeof scope['id'] === 'string') return { runId: scope['id'], attention: null, escalateTo: null };
    // A deployment's or workspace's warning goes through the routes of the run whose reservation crossed it.
    if (typeof data['reservationId'] !== 'string') return null;
    const [reserved] = await store.readStream(`budget-${data['reservationId']}`, { limit: 1 });
    const runId = record(reserved?.data)['runId'];
    return typeof runId === 'string' ? { runId, attention: null, escalateTo: null } : null;
  }
  return null;
}
