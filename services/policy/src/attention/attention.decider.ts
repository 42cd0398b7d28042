import { approverAllowed, type ActorRef, type ApprovalRules, type AttentionEdit, type AttentionScope, type AttentionState, type PolicyEventData, type Role } from '@packetagent/contracts';
import { ApprovalAlreadyRecordedError, ApproverNotAllowedError, AttentionAlreadyAnsweredError, EditNotSupportedError } from '../shared/errors';

export interface RecordedApproval {
  actor: ActorRef;
  scope: AttentionScope;
  at: string;
}

/** An attention as its stream folds: `absent` until `attention.requested`. */
export type Attention =
  | { status: 'absent'; attentionId: string; version: 0 }
  | {
      status: AttentionState;
      attentionId: string;
      deadline: string;
      scope: AttentionScope | null;
      version: number;
      rules: ApprovalRules | null;
      /** Approvals towards the quorum so far. */
      approvals: RecordedApproval[];
      remindedAt: string | null;
      escalatedAt: string | null;
    };

export type ExistingAttention = Exclude<Attention, { status: 'absent' }>;

/** Who answers, as far as the rules need to know: the actor, and the role and email the caller vouched for. */
export interface Approver {
  actor: ActorRef;
  role?: Role | undefined;
  email?: string | undefined;
}

export type AttentionCommand =
  | { kind: 'request'; data: PolicyEventData<'attention.requested'> }
  | { kind: 'approve'; scope: AttentionScope; approver: Approver; now: Date; edit?: AttentionEdit }
  | { kind: 'reject'; reason: string; approver: Approver; now: Date }
  | { kind: 'expire'; now: Date }
  | { kind: 'remind'; now: Date }
  | { kind: 'escalate'; now: Date }
  | { kind: 'withdraw'; reason: string };

export type AttentionEvent =
  | { type: 'attention.requested'; data: PolicyEventData<'attention.requested'> }
  | { type: 'attention.approval_recorded'; data: PolicyEventData<'attention.approval_recorded'> }
  | { type: 'attention.approved'; data: PolicyEventData<'attention.approved'> }
  | { type: 'attention.rejected'; data: PolicyEventData<'attention.rejected'> }
  | { type: 'attention.expired'; data: PolicyEventData<'attention.expired'> }
  | { type: 'attention.reminded'; data: PolicyEventData<'attention.reminded'> }
  | { type: 'attention.escalated'; data: PolicyEventData<'attention.escalated'> }
  | { type: 'attention.withdrawn'; data: PolicyEventData<'attention.withdrawn'> };

export function initialAttention(attentionId: string): Attention {
  return { status: 'absent', attentionId, version: 0 };
}

const pastDeadline = (attention: ExistingAttention, now: Date) => Date.parse(attention.deadline) <= now.getTime();
const sameActor = (a: ActorRef, b: ActorRef) => a.kind === b.kind && a.id === b.id;

/**
 * An answer to an open attention is recorded once; any later one is refused with the state that
 * stands. An answer that arrives after the deadline expires the attention instead, and the
 * caller learns so from `lateAnswer`. Under rules, only the approvers they name may answer
 * (checked first, so a refused caller changes nothing); a quorum of n needs n distinct
 * approvers, the same one twice is refused; any allowed approver's reject rejects. A reminder
 * and an escalation are recorded once each, and only while the attention is open.
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
      if (!approverAllowed(attention.rules, { id: command.approver.actor.id, role: command.approver.role, email: command.approver.email })) {
        throw new ApproverNotAllowedError(`the approval rules of attention ${attention.attentionId} do not name this approver (${describeApprovers(attention.rules)})`);
      }
      if (pastDeadline(attention, command.now)) return [{ type: 'attention.expired', data: { deadline: attention.deadline } }];
      return command.kind === 'approve' ? approve(attention, command) : [{ type: 'attention.rejected', data: { reason: command.reason, actor: command.approver.actor } }];
    case 'expire':
      return answered || !pastDeadline(attention, command.now) ? [] : [{ type: 'attention.expired', data: { deadline: attention.deadline } }];
    case 'remind':
      if (answered || attention.remindedAt !== null || pastDeadline(attention, command.now)) return [];
      return [{ type: 'attention.reminded', data: { at: command.now.toISOString() } }];
    case 'escalate': {
      const to = attention.rules?.escalate?.to;
      if (answered || to === undefined || attention.escalatedAt !== null || pastDeadline(attention, command.now)) return [];
      return [{ type: 'attention.escalated', data: { to, at: command.now.toISOString() } }];
    }
    case 'withdraw':
      return answered ? [] : [{ type: 'attention.withdrawn', data: { reason: command.reason } }];
    default:
      return unreachable(command);
  }
}

function approve(attention: ExistingAttention, command: Extract<AttentionCommand, { kind: 'approve' }>): AttentionEvent[] {
  const actor = command.approver.actor;
  const quorum = attention.rules?.quorum ?? 1;
  if (attention.approvals.some((recorded) => sameActor(recorded.actor, actor))) throw new ApprovalAlreadyRecordedError(attention.attentionId);
  // Approvers of a quorum would each approve another call if one of them edited it.
  if (command.edit && quorum > 1) throw new EditNotSupportedError('an approval that needs more than one approver cannot edit the call');
  if (attention.approvals.length + 1 < quorum) return [{ type: 'attention.approval_recorded', data: { actor, scope: command.scope, at: command.now.toISOString() } }];
  // Each approver agreed to at least the narrowest scope any of them chose.
  const scope: AttentionScope = command.scope === 'once' || attention.approvals.some((recorded) => recorded.scope === 'once') ? 'once' : 'run';
  const data: PolicyEventData<'attention.approved'> = { scope, actor };
  if (quorum > 1) data.approvers = [...attention.approvals.map((recorded) => recorded.actor), actor];
  if (command.edit) data.edit = command.edit;
  if (command.approver.role) data.role = command.approver.role;
  return [{ type: 'attention.approved', data }];
}

function describeApprovers(rules: ApprovalRules | null): string {
  const approvers = rules?.approvers;
  if (typeof approvers === 'string') return `approvers hold at least the ${approvers} role`;
  return `approvers are ${approvers?.length ?? 0} named people`;
}

export function evolve(attention: Attention, event: AttentionEvent): ExistingAttention {
  const version = attention.version + 1;
  if (event.type === 'attention.requested') {
    return {
      status: 'open',
      attentionId: attention.attentionId,
      deadline: event.data.deadline,
      scope: null,
      version,
      rules: event.data.rules ?? null,
      approvals: [],
      remindedAt: null,
      escalatedAt: null,
    };
  }
  if (attention.status === 'absent') throw new Error(`${event.type} on an attention that was never requested`);
  switch (event.type) {
    case 'attention.approval_recorded':
      return { ...attention, approvals: [...attention.approvals, { actor: event.data.actor, scope: event.data.scope, at: event.data.at }], version };
    case 'attention.approved':
      return { ...attention, status: 'approved', scope: event.data.scope, version };
    case 'attention.rejected':
      return { ...attention, status: 'rejected', version };
    case 'attention.expired':
      return { ...attention, status: 'expired', version };
    case 'attention.reminded':
      return { ...attention, remindedAt: event.data.at, version };
    case 'attention.escalated':
      return { ...attention, escalatedAt: event.data.at, version };
    case 'attention.withdrawn':
      return { ...attention, status: 'withdrawn', version };
    default:
      return unreachable(event);
  }
}

function unreachable(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}
