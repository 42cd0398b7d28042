import { RemoteCommandError, type CommandBus } from '@packetagent/bus';
import { OAuthErrorCodes, openSealedCredential, PolicyCommands, recipientKeyPair, VaultCommands, type AuthorizeResult, type JsonValue } from '@packetagent/contracts';
import type { PlannedCall } from '@packetagent/tools';
import type { BudgetAnswer, BudgetAsk } from '../../run/run.intent';
import type { CredentialRefusal, CredentialsAnswer, GuardPort, RaisedAttention } from '../ports';
import { withRetries } from '../retry';
import type { ApprovalRoleReader } from './approval-roles';

/** Policy decides each call; the vault opens the credentials a decision grants, sealed to a key made for this call. */
export class PolicyGuard implements GuardPort {
  constructor(
    private readonly commands: CommandBus,
    private readonly run: { runId: string; workspaceId: string; effectiveDigest: string },
    private readonly approvalRole: ApprovalRoleReader = async () => null,
  ) {}

  /** Policy knows every admitted run (it reads an admission it has not applied yet from the store): a deny is a deny. */
  authorize(planned: PlannedCall, signal: AbortSignal): Promise<AuthorizeResult> {
    return withRetries(
      () =>
        this.commands.request(PolicyCommands.authorize, {
          workspaceId: this.run.workspaceId,
          runId: this.run.runId,
          tool: planned.tool,
          verb: planned.verb,
          resource: planned.resource,
          credentials: planned.credentials,
          callDigest: planned.callDigest,
          arguments: planned.redactedArgs,
          effectiveDigest: this.run.effectiveDigest,
          ...(planned.computer !== null ? { computer: planned.computer } : {}),
        }),
      signal,
    );
  }

  async credentials(decision: AuthorizeResult, planned: PlannedCall, signal: AbortSignal): Promise<CredentialsAnswer> {
    const values: Record<string, string> = {};
    for (const grant of decision.credentialGrants ?? []) {
      const keys = recipientKeyPair();
      const audience = planned.audiences?.[grant.credential];
      try {
        const resolved = await withRetries(() => this.commands.request(VaultCommands.resolve, { grant: grant.token, recipientPublicKey: keys.publicKey, ...(audience ? { audience } : {}) }), signal);
        values[grant.credential] = openSealedCredential(resolved.sealed, keys.privateKey);
      } catch (error) {
        if (error instanceof RemoteCommandError && error.code === OAuthErrorCodes.reconnectRequired) return { ok: false, refusal: { credential: grant.credential, reason: error.message } };
        throw error;
      }
    }
    return { ok: true, values };
  }

  async requestReconnect(planned: PlannedCall, refusal: CredentialRefusal, signal: AbortSignal): Promise<RaisedAttention> {
    const raised = await withRetries(
      () =>
        this.commands.request(PolicyCommands.raiseAttention, {
          workspaceId: this.run.workspaceId,
          runId: this.run.runId,
          kind: 'credential_reconnect',
          tool: planned.tool,
          verb: planned.verb,
          resource: planned.resource,
          arguments: { credential: refusal.credential, reason: refusal.reason, callId: planned.callId },
        }),
      signal,
    );
    return { attentionId: raised.id, state: raised.state };
  }

  async requestBudget(ask: BudgetAsk, signal: AbortSignal): Promise<RaisedAttention> {
    const raised = await withRetries(
      () =>
        this.commands.request(PolicyCommands.raiseAttention, {
          workspaceId: this.run.workspaceId,
          runId: this.run.runId,
          kind: 'budget_request',
          tool: 'budget',
          verb: 'raise',
          resource: null,
          arguments: { ...ask },
        }),
      signal,
    );
    return { attentionId: raised.id, state: raised.state };
  }

  async budgetAnswer(attentionId: string, signal: AbortSignal): Promise<BudgetAnswer> {
    const attention = await withRetries(() => this.commands.request(PolicyCommands.getAttention, { workspaceId: this.run.workspaceId, attentionId }), signal);
    const role = attention.state === 'approved' ? await this.approvalRole(attentionId) : null;
    return { state: attention.state, approvedBy: attention.state === 'approved' ? attention.answeredBy : null, role };
  }

  async raiseAttention(kind: 'uncertain_effect' | 'run_unrecordable', planned: PlannedCall | null, details: JsonValue, signal: AbortSignal): Promise<string | null> {
    const raised = await withRetries(
      () =>
        this.commands.request(PolicyCommands.raiseAttention, {
          workspaceId: this.run.workspaceId,
          runId: this.run.runId,
          kind,
          tool: planned?.tool ?? 'supervisor',
          verb: planned?.verb ?? 'record',
          resource: planned?.resource ?? null,
          arguments: details,
        }),
      signal,
    );
    return raised.id;
  }
}
