import type { CommandBus } from '@packetagent/bus';
import { openSealedCredential, PolicyCommands, recipientKeyPair, VaultCommands, type AuthorizeResult, type JsonValue } from '@packetagent/contracts';
import type { PlannedCall } from '@packetagent/tools';
import type { GuardPort } from '../ports';
import { withRetries } from '../retry';

/** Policy decides each call; the vault opens the credentials a decision grants, sealed to a key made for this call. */
export class PolicyGuard implements GuardPort {
  constructor(
    private readonly commands: CommandBus,
    private readonly run: { runId: string; workspaceId: string; effectiveDigest: string },
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
