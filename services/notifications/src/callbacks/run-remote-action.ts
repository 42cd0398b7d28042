import { CommandBus } from '@packetagent/bus';
import { IntakeCommands, PolicyCommands, type ActorRef, type JsonValue } from '@packetagent/contracts';
import type { CallbackRow } from './callback.rows';

const TIMEOUT_MS = 10_000;

/**
 * The operator command a link stands for, sent as the console sends it (so every check at the
 * final boundary applies): the recipient is the actor, acting with the route's role.
 */
export async function runRemoteAction(commands: CommandBus, row: CallbackRow, reason: string | undefined): Promise<JsonValue> {
  const actor: ActorRef = { kind: 'remote_control', id: row.recipient };
  // A mail's recipient is who they are: rules that list approvers by email can name them.
  const email = row.recipient.startsWith('email:') ? { email: row.recipient.slice('email:'.length) } : {};
  const workspaceId = row.workspace_id;
  const options = { timeoutMs: TIMEOUT_MS };
  switch (row.action) {
    case 'approve':
    case 'approve_for_run': {
      // The role travels with the answer: approval rules that name approvers by role check it.
      const approve = { workspaceId, attentionId: row.target_id, scope: row.action === 'approve' ? ('once' as const) : ('run' as const), actor, role: row.role, ...email };
      return (await commands.request(PolicyCommands.approveAttention, approve, options)) as unknown as JsonValue;
    }
    case 'reject': {
      const reject = { workspaceId, attentionId: row.target_id, reason: reason ?? `rejected through a link sent to ${row.recipient}`, actor, role: row.role, ...email };
      return (await commands.request(PolicyCommands.rejectAttention, reject, options)) as unknown as JsonValue;
    }
    case 'pause':
      return (await commands.request(IntakeCommands.pauseRun, { workspaceId, runId: row.target_id, reason: reason ?? null, actor }, options)) as unknown as JsonValue;
    case 'resume':
      return (await commands.request(IntakeCommands.resumeRun, { workspaceId, runId: row.target_id, actor }, options)) as unknown as JsonValue;
    case 'stop':
      return (await commands.request(IntakeCommands.stopRun, { workspaceId, runId: row.target_id, reason: reason ?? null, actor }, options)) as unknown as JsonValue;
    case 'revoke':
      return (await commands.request(
        IntakeCommands.controlDeployment,
        { workspaceId, deploymentId: row.deployment_id!, action: 'revoke', version: null, reason: reason ?? `revoked through a link sent to ${row.recipient}`, actor },
        options,
      )) as unknown as JsonValue;
    case 'open':
      throw new Error('open is read-only');
  }
}
