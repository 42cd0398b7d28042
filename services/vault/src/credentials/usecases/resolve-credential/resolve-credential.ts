import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import {
  DomainError,
  parseRecipientPublicKey,
  sealCredential,
  verifyCredentialGrant,
  type VaultCommands,
} from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { decryptValue } from '../../../crypto/envelope-cipher';
import { ConnectionTokens, RefreshCarry } from '../../../oauth/connection-tokens';
import { GRANT_VERIFY_KEY, type GrantVerifyKey } from '../../../keys/grant-verify-key';
import { MASTER_KEY_RING, type MasterKeyRing } from '../../../keys/master-key-ring';
import { CredentialGrantUsedError, CredentialNotFoundError, GrantVerificationUnavailableError } from '../../../shared/errors';
import { retryOnConflict } from '../../../shared/retry';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../../vault.options';
import { decide } from '../../credential.decider';
import { appendCredentialEvents, loadCredential, lockCredential, readLiveCredential } from '../../credential.rows';

export type ResolveCredentialRequest = z.output<typeof VaultCommands.resolve.request>;
export type ResolveCredentialResult = z.input<typeof VaultCommands.resolve.response>;

/**
 * Redeems a policy grant: verifies it, records it as used (the primary key makes a second use
 * fail on every replica), decrypts the live version and seals it to the caller's key. The grant
 * is consumed only together with a successful decryption and its audit event.
 */
@Injectable()
export class ResolveCredential {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(GRANT_VERIFY_KEY) private readonly grantKey: GrantVerifyKey,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
    private readonly connections: ConnectionTokens,
  ) {}

  async execute(request: ResolveCredentialRequest): Promise<ResolveCredentialResult> {
    try {
      return await this.resolve(request);
    } catch (error) {
      if (error instanceof DomainError) this.options.log('warn', 'credential grant refused', { code: error.code, reason: error.message });
      throw error;
    }
  }

  private async resolve(request: ResolveCredentialRequest): Promise<ResolveCredentialResult> {
    if (!this.grantKey.key) throw new GrantVerificationUnavailableError();
    const grant = verifyCredentialGrant(request.grant, this.grantKey.key, this.options.clock());
    // Checked before the grant is consumed: a malformed key must not burn it.
    const recipient = parseRecipientPublicKey(request.recipientPublicKey);
    const { workspaceId, credential: name } = grant;
    const carry = new RefreshCarry();
    const resolved = await retryOnConflict(() =>
      this.store.transaction(async (client) => {
        const used = await client.query(
          `INSERT INTO vault.used_grants (grant_id, workspace_id, credential, run_id, expires_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (grant_id) DO NOTHING`,
          [grant.grantId, workspaceId, name, grant.runId, grant.expiresAt],
        );
        if (used.rowCount === 0) throw new CredentialGrantUsedError(grant.grantId);
        await lockCredential(client, workspaceId, name);
        const state = await loadCredential(client, workspaceId, name);
        decide({ kind: 'redeem', grant }, state);
        const row = await readLiveCredential(client, workspaceId, name);
        if (!row) throw new CredentialNotFoundError(name);
        let version = row.version;
        let plain: Buffer;
        if (row.kind === 'oauth') {
          // A connection hands out its access token (refreshed first when it is about to expire), never what refreshes it.
          const answer = await this.connections.accessToken(client, row, request.audience, state.lastVersion, carry);
          if (!answer.ok) return { refused: answer.error };
          ({ version } = answer);
          plain = answer.accessToken;
        } else {
          plain = decryptValue({ ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, wrappedKey: row.wrapped_key, keyId: row.key_id }, { workspaceId, name, version }, this.ring);
        }
        try {
          const events = decide({ kind: 'redeem', grant }, { status: 'live', name, lastVersion: version });
          await appendCredentialEvents(this.store, client, workspaceId, name, events, { kind: 'service', id: 'vault' }, { keepTransaction: row.kind === 'oauth' });
          return { version, sealed: sealCredential(plain, recipient) };
        } finally {
          plain.fill(0);
        }
      }),
    );
    // The grant stays used and the refusal recorded: the run asks again after an operator reconnects.
    if ('refused' in resolved) throw resolved.refused;
    this.options.log('info', 'credential grant redeemed', { workspaceId, name, version: resolved.version, grantId: grant.grantId, runId: grant.runId, tool: grant.tool });
    return { workspaceId, name, version: resolved.version, sealed: resolved.sealed };
  }
}
