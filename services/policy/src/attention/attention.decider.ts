import type { ActorRef, AttentionScope, AttentionState, PolicyEventData } from '@packetagent/contracts';
import { AttentionAlreadyAnsweredError } from '../shared/errors';

/** An attention as its stream folds: `absent` until `attention.requested`. */
export type Attention =
  | { status: 'absent'; attentionId: string; version: 0 }
  | {
      status: AttentionState;
      attentionId: string;
      deadline: string;
      scope: AttentionScope | null;
      version: number;
    };

export type ExistingAttention = Exclude<Attention, { status: 'absent' }>;

export type AttentionCommand =
  | { kind: 'request'; data: PolicyEventData<'attention.requested'> }
  | { kind: 'approve'; scope: AttentionScope; actor: ActorRef; now: Date }
  | { kind: 'reject'; reason: string; actor: ActorRef; now: Date }
  | { kind: 'expire'; now: Date }
  | { kind: 'withdraw'; reason: string };

export type AttentionEvent =
  | { type: 'attention.requested'; data: PolicyEventData<'attention.requested'> }
  | { type: 'attention.approved'; data: PolicyEventData<'attention.approved'> }
  | { type: 'attention.rejected'; data: PolicyEventData<'attention.rejected'> }
  | { type: 'attention.expired'; data: PolicyEventData<'attention.expired'> }
  | { type: 'attention.withdrawn'; data: PolicyEventData<'attention.withdrawn'> };

export function initialAttention(attentionId: string): Attention {
  return { status: 'absent', attentionId, version: 0 };
}

const pastDeadline = (attention: ExistingAttention, now: Date) => Date.parse(attention.deadline) <= now.getTime();

/**
 * An answer to an open attention is recorded once; any later one is refused with the state that
 * stands. An answer that arrives after the deadline expires the attention instead, and the
 * caller learns so from `lateAnswer`.
 */
export function decide(command: AttentionCommand, attention: Attention): AttentionEvent[] {
  if (command.kind === 'request') {
    return attention.status === 'absent' ? [{ type: 'attention.requested', data: command.data }] : [];
  }
  if (attention.status === 'absent') throw new Error(`attention ${attention.attentionId} was never requested`);
  const answered = attention.status !== 'open';
  switch (command.kind) {
    case 'approve':
    case 'reject':
      if (answered) throw new AttentionAlreadyAnsweredError(attention.attentionId, attention.status as Exclude<AttentionState, 'open'>);
      if (pastDeadline(attention, command.now)) return [{ type: 'attention.expired', data: { deadline: attention.deadline } }];
      return command.kind === 'approve'
        ? [{ type: 'attention.approved', data: { scope: command.scope, actor: command.actor } }]
        : [{ type: 'attention.rejected', data: { reason: command.reason, actor: command.actor } }];
    case 'expire':
      return answered || !pastDeadline(attention, command.now) ? [] : [{ type: 'attention.expired', data: { deadline: attention.deadline } }];
    case 'withdraw':
      return answered ? [] : [{ type: 'attention.withdrawn', data: { reason: command.reason } }];
    default:
      return unreachable(command);
  }
}

export function evolve(attention: Attention, event: AttentionEvent): ExistingAttention {
  const version = attention.version + 1;
  if (event.type === 'attention.requested') {
    return { status: 'open', attentionId: attention.attentionId, deadline: event.data.deadline, scope: null, version };
  }
  if (attention.status === 'absent') throw new Error(`${event.type} on an attention that was never requested`);
  switch (event.type) {
    case 'attention.approved':
      return { ...attention, status: 'approved', scope: event.data.scope, version };
    case 'attention.rejected':
      return { ...attention, status: 'rejected', version };
    case 'attention.expired':
      return { ...attention, status: 'expired', version };
    case 'attention.withdrawn':
      return { ...attention, status: 'withdrawn', version };
    default:
      return unreachable(event);
  }
}

function unreachable(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}
