import type { NotificationChannel, NotificationEvent, NotificationRole, RemoteAction } from '@packetagent/contracts';

export interface ActionContext {
  trigger: NotificationEvent;
  channel: NotificationChannel;
  role: NotificationRole;
  /** An attention the message is about, while it is open. */
  openAttention: boolean;
  /** The run's state when the message is queued (`active`, `waiting`, `paused`...; null when over or unknown). */
  runState: string | null;
}

const ATTENTION_TRIGGERS: ReadonlySet<NotificationEvent> = new Set(['attention', 'reminder', 'escalation']);
const LABELS: Readonly<Record<RemoteAction, string>> = {
  approve: 'Approve',
  approve_for_run: 'Approve for this run',
  reject: 'Reject',
  pause: 'Pause run',
  resume: 'Resume run',
  stop: 'Stop run',
  revoke: 'Revoke run',
  open: 'Open',
};

export const actionLabel = (action: RemoteAction): string => LABELS[action];

/**
 * The controls a message offers: only what the recipient's role may do and what the run's state
 * allows when it is sent (the command checks both again when a link is used). Approving needs a
 * member; revoking an admin; a viewer only opens. PacketPhone also carries run controls;
 * PacketChat's links are read-only.
 */
export function remoteActions(context: ActionContext): RemoteAction[] {
  if (context.channel === 'packetchat') return ['open'];
  const actions: RemoteAction[] = [];
  const member = context.role === 'member' || context.role === 'admin';
  if (member && context.openAttention && ATTENTION_TRIGGERS.has(context.trigger)) actions.push('approve', 'reject');
  if (context.channel === 'packetphone' && member && context.runState !== null) {
    if (context.runState === 'paused') actions.push('resume');
    else if (context.runState === 'active' || context.runState === 'waiting' || context.runState === 'admitted') actions.push('pause');
    actions.push('stop');
    if (context.role === 'admin') actions.push('revoke');
  }
  actions.push('open');
  return actions;
}
