import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { parseRecipientPublicKey, sealCredential, type OAuthCommands } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../vault.options';
import { loadCredential, lockCredential, readLiveCredential } from '../../credentials/credential.rows';
import { CredentialNotFoundError } from '../../shared/errors';
import { ConnectionTokens, RefreshCarry } from '../connection-tokens';
import { retryOnConflict } from '../../shared/retry';
import { OAuthNotAConnectionError } from '../oauth.errors';

export type ListingTokenRequest = z.output<typeof OAuthCommands.token.request>;
export type ListingTokenResult = z.input<typeof OAuthCommands.token.response>;

/**
 * An access token for listing a server's tools while a version is created. Only an OAuth
 * connection answers, and only for the server it was made for: the token goes nowhere its
 * authorization server did not mean it to.
 */
@Injectable()
export class IssueListingToken {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly connections: ConnectionTokens,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {}

  async execute(request: ListingTokenRequest): Promise<ListingTokenResult> {
    const recipient = parseRecipientPublicKey(request.recipientPublicKey);
    const { workspaceId, credential: name } = request;
    const carry = new RefreshCarry();
    const answer = await retryOnConflict(() => this.store.transaction(async (client) => {
      await lockCredential(client, workspaceId, name);
      const state = await loadCredential(client, workspaceId, name);
      const row = await readLiveCredential(client, workspaceId, name);
      if (!row) throw new CredentialNotFoundError(name);
      if (row.kind !== 'oauth') throw new OAuthNotAConnectionError(name);
      return this.connections.accessToken(client, row, request.audience, state.lastVersion, carry);
    }));
    if (!answer.ok) throw answer.error;
    try {
      this.options.log('info', 'OAuth access token issued for listing tools', { workspaceId, name, version: answer.version, audience: request.audience });
      return { sealed: sealCredential(answer.accessToken, recipient), expiresAt: answer.expiresAt };
    } finally {
      answer.accessToken.fill(0);
    }
  }
}
