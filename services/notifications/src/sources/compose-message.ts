import type { DecodedEvent, NotificationEvent, RunPin } from '@packetagent/contracts';
import type { AttentionFacts, OutboundMessage } from '../channels/channel';

export interface MessageSource {
  event: DecodedEvent;
  trigger: NotificationEvent;
  pin: RunPin;
  runId: string;
  attention: AttentionFacts | null;
}

const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** The kind of an attention: `approval` for a tool call; raised ones say what they are in `arguments.kind`. */
export function attentionKind(requested: Record<string, unknown>): string {
  const args = record(requested['arguments']);
  return requested['tool'] === 'ask_owner' ? 'question' : (text(args['kind']) ?? 'approval');
}

function runOutcome(event: DecodedEvent): { state: string; reason: string | null } {
  const data = record(event.data);
  const state = event.type.slice('run.'.length);
  switch (event.type) {
    case 'run.succeeded':
      return { state, reason: text(data['summary']) };
    case 'run.failed':
      return { state, reason: [text(data['reason']), text(data['detail'])].filter(Boolean).join(': ') || null };
    case 'run.abandoned':
      return { state, reason: [text(data['cause']), text(data['detail'])].filter(Boolean).join(': ') || null };
    default:
      return { state, reason: text(data['reason']) ?? text(data['detail']) };
  }
}

function attentionLines(attention: AttentionFacts): string[] {
  return [
    `Asks: ${attention.kind === 'approval' ? `approval of ${attention.tool} ${attention.verb}${attention.resource ? ` on ${attention.resource}` : ''}` : attention.kind.replace(/_/g, ' ')}`,
    `Answer by: ${attention.deadline}`,
  ];
}

/** The message of one source event, without its delivery id (given per route). Pure. */
export function composeMessage(source: MessageSource): Omit<OutboundMessage, 'deliveryId'> {
  const { event, trigger, pin, runId, attention } = source;
  const worker = { name: pin.workerName, deploymentId: pin.deploymentId, versionDigest: pin.digest };
  const base = { trigger, workspaceId: event.workspaceId, occurredAt: event.occurredAt, source: { eventId: event.id, type: event.type }, worker };
  const lines = [`Worker: ${pin.workerName} (version ${pin.version})`, `Run: ${runId}`];
  const data = record(event.data);

  if (attention) {
    const title =
      trigger === 'reminder'
        ? `Reminder: ${pin.workerName} is still waiting for an answer`
        : trigger === 'escalation'
          ? `Escalated: ${pin.workerName} is waiting for an answer`
          : `${pin.workerName} needs ${attention.kind === 'approval' ? 'an approval' : 'attention'}`;
    return { ...base, run: { id: runId, state: 'waiting', reason: null }, attention, budget: null, title, text: [...lines, ...attentionLines(attention)].join('\n') };
  }

  if (event.type === 'budget.warning') {
    const scope = record(data['scope']);
    const unit = String(scope['unit'] ?? 'usd');
    const budget = {
      scope: `${String(scope['kind'])}:${String(scope['window'])}`,
      unit,
      limit: Number(data['limit']),
      spent: Number(data['spent']),
      held: Number(data['held']),
      thresholdPercent: Number(data['thresholdPercent']),
    };
    const shown = (micros: number) => (unit === 'usd' ? `$${(micros / 1_000_000).toFixed(2)}` : String(micros));
    return {
      ...base,
      run: { id: runId, state: null, reason: null },
      attention: null,
      budget,
      title: `${pin.workerName} reached ${budget.thresholdPercent}% of its ${budget.scope} budget`,
      text: [...lines, `Spent ${shown(budget.spent)} and holding ${shown(budget.held)} of ${shown(budget.limit)} (${budget.scope}, ${unit})`].join('\n'),
    };
  }

  if (event.type === 'run.checkpoint') {
    const iteration = Number(data['iteration'] ?? 0);
    const toolCalls = Number(data['toolCalls'] ?? 0);
    return {
      ...base,
      run: { id: runId, state: 'active', reason: null },
      attention: null,
      budget: null,
      title: `${pin.workerName} is working (step ${iteration})`,
      text: [...lines, `Step ${iteration}, ${toolCalls} tool call${toolCalls === 1 ? '' : 's'} so far`].join('\n'),
    };
  }

  const outcome = runOutcome(event);
  return {
    ...base,
    run: { id: runId, state: outcome.state, reason: outcome.reason },
    attention: null,
    budget: null,
    title: `${pin.workerName} ${outcome.state.replace(/_/g, ' ')}`,
    text: [...lines, `Outcome: ${outcome.state}${outcome.reason ? ` (${outcome.reason.slice(0, 500)})` : ''}`].join('\n'),
  };
}
