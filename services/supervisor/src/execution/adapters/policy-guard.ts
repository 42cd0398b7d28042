import type { CommandBus } from '@packetagent/bus';
import { DomainError, openSealedCredential, PolicyCommands, recipientKeyPair, VaultCommands, type AuthorizeResult, type JsonValue } from '@packetagent/contracts';
import type { PlannedCall } from '@packetagent/tools';
import type { GuardPort } from '../ports';
import { withRetries } from '../retry';

class PolicyNotReadyError extends DomainError {
  readonly code = 'policy_not_ready';
  override readonly retryable = true;
}

/** Policy decides each call; the vault opens the credentials a decision grants, sealed to a key made for this call. */
export class PolicyGuard implements GuardPort {
  constructor(
    private readonly commands: CommandBus,
    private readonly run: { runId: string; workspaceId: string },
  ) {}

  async authorize(planned: PlannedCall, signal: AbortSignal): Promise<AuthorizeResult> {
    return withRetries(async () => {
      const result = await this.commands.request(PolicyCommands.authorize, {
        workspaceId: this.run.workspaceId,
        runId: this.run.runId,
        tool: planned.tool,
        verb: planned.verb,
        resource: planned.resource,
        credentials: planned.credentials,
        callDigest: planned.callDigest,
        arguments: planned.redactedArgs,
      });
      // Policy follows run.admitted from the bus; a run it has not seen yet is not a deny.
      if (result.decision === 'deny' && (result.reason.code === 'unknown_run' || result.reason.code === 'grants_unavailable')) {
        throw new PolicyNotReadyError(result.reason.text);
      }
      return result;
    }, signal, 20_000).catch((error: unknown) => {
      if (error instanceof PolicyNotReadyError) return { decision: 'deny', reason: { code: 'unknown_run', text: error.message } } as AuthorizeResult;
      throw error;
    });
  }

  async credentials(decision: AuthorizeResult, signal: AbortSignal): Promise<Record<string, string>> {
    const values: Record<string, string> = {};
    for (const grant of decision.credentialGrants ?? []) {
      const keys = recipientKeyPair();
      const resolved = await withRetries(() => this.commands.request(VaultCommands.resolve, { grant: grant.token, recipientPublicKey: keys.publicKey }), signal);
      values[grant.credential] = openSealedCredential(resolved.sealed, keys.privateKey);
    }
    return values;
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
